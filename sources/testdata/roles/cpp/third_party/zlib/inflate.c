int inflate() { return 0; }
