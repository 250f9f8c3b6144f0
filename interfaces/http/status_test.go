package httpapi

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// TestErrorTableMatchesDocs keeps docs/errors.md and codeStatus equal, and
// codeStatus and workspace.Codes.
func TestErrorTableMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d{3}) \\|").FindAllStringSubmatch(string(b), -1)
	if len(rows) != len(codeStatus) {
		t.Fatalf("docs list %d codes, code has %d", len(rows), len(codeStatus))
	}
	for _, r := range rows {
		st, _ := strconv.Atoi(r[2])
		if got, ok := codeStatus[workspace.Code(r[1])]; !ok || got != st {
			t.Errorf("docs: %s %d; code: %d (known %v)", r[1], st, got, ok)
		}
	}
	if len(workspace.Codes()) != len(codeStatus) {
		t.Fatalf("workspace has %d codes, the table %d", len(workspace.Codes()), len(codeStatus))
	}
	for _, c := range workspace.Codes() {
		if HTTPStatus(c) < 400 {
			t.Errorf("code %s status %d", c, HTTPStatus(c))
		}
	}
	if HTTPStatus("NOPE") != 500 {
		t.Errorf("an unknown code is %d, want 500", HTTPStatus("NOPE"))
	}
}
