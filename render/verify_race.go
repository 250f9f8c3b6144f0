//go:build race

package render

// Under the race detector (the test suite's runs) every fit is verified.
func init() { verifyFits = true }
