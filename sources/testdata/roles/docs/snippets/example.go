package snippets
