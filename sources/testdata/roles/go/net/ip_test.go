package net

import "testing"

func TestParseIP(t *testing.T) {}
