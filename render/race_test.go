//go:build race

package render

func init() { raceEnabled = true }
