package net_test

func ExampleDial() {}
