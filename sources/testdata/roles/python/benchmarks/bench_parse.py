from pkg import parse

def time_parse():
    parse("x")
