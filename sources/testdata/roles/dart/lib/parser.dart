class Parser {}
