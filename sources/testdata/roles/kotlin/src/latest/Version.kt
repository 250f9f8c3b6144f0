package acme

const val VERSION = 1
