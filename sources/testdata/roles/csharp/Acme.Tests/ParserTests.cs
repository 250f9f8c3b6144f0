namespace Acme.Tests { class ParserTests {} }
