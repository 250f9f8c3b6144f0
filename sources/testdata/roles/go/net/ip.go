package net

// ParseIP parses s as an IP address.
func ParseIP(s string) IP { return nil }
