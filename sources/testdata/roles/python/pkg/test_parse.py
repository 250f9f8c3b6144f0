def test_parse_qs():
    pass
