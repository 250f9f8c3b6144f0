// run

package main

func main() {}
