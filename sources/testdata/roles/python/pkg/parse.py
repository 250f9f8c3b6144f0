def parse_qs(qs):
    return {}
