TEST(Parser, Parse) {}
