int parse() { return 0; }
