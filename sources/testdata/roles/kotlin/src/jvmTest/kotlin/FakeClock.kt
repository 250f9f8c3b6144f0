package acme

class FakeClock
