package workspace

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestErrorTableMatchesDocs keeps docs/errors.md and codeStatus equal.
func TestErrorTableMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d{3}) \\|").FindAllStringSubmatch(string(b), -1)
	if len(rows) != len(codeStatus) {
		t.Fatalf("docs list %d codes, code has %d", len(rows), len(codeStatus))
	}
	for _, r := range rows {
		st, _ := strconv.Atoi(r[2])
		if got, ok := codeStatus[Code(r[1])]; !ok || got != st {
			t.Errorf("docs: %s %d; code: %d (known %v)", r[1], st, got, ok)
		}
	}
}
