namespace Acme { class Parser {} }
