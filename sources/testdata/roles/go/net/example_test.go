package net_test

func ExampleParseIP() {}
