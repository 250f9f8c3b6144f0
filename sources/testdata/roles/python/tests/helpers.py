def make():
    pass
