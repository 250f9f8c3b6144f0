package strings_test

import "fmt"

func ExampleReplacer() {
	fmt.Println()
}
