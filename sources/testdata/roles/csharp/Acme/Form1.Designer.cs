namespace Acme { partial class Form1 {} }
