namespace Acme.Tests { class Helpers {} }
