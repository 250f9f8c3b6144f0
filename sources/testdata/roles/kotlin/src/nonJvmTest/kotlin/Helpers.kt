package acme

fun helper() = 1
