package p

// isGen reports whether a comment says "Code generated ... DO NOT EDIT."
var marker = "@generated"
