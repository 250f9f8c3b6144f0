fn bench() {}
