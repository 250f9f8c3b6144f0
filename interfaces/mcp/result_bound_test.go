package mcpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResultBound: the size that lets a result skip measuring is never
// below what the SDK sends, for either protocol form and the worst
// characters to escape.
func TestResultBound(t *testing.T) {
	s := &server{}
	for _, text := range []string{"", "plain", strings.Repeat("\x01<>&\u2028\"\\", 500), strings.Repeat("漢字🎉", 300)} {
		structured, _ := json.Marshal(map[string]string{"text": text})
		for _, rendered := range []*string{nil, &text} {
			for _, modern := range []bool{true, false} {
				ans := answer{structured: structured, rendered: rendered}
				res := s.result("search", ans, modern)
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > resultBound(ans) {
					t.Fatalf("modern %v: %d bytes sent, bound %d", modern, len(b), resultBound(ans))
				}
				if res.IsError || (modern && res.StructuredContent == nil) {
					t.Fatalf("modern %v: %+v", modern, res)
				}
			}
		}
	}
}
