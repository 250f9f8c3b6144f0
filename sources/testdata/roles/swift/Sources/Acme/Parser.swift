struct Parser {}
