package query

import (
	"strings"
	"testing"
)

// TestPlanProbesDeadClause: a clause found nowhere (an unknown word) is
// left out of the plan, so that it cannot take the place of clauses that
// match. Before, "parse the request header" over a large index without
// "parse" planned a probe for "parse" alone and answered nothing.
func TestPlanProbesDeadClause(t *testing.T) {
	prof, ok := profileByName("balanced")
	if !ok {
		t.Fatal("no balanced profile")
	}
	const n = 40000
	clauses := []clause{
		{match: `"parse"`, df: 0, exact: true, scan: 0, prio: 9},
		{match: `"request"`, df: 30000, exact: true, scan: 30000, prio: 1},
		{match: `"header"`, df: 20000, exact: true, scan: 20000, prio: 1.2},
	}
	probes := planProbes(prof, n, clauses)
	if len(probes) == 0 {
		t.Fatal("no probes")
	}
	live := false
	for _, p := range probes {
		if strings.Contains(p.match, `"parse"`) {
			t.Errorf("probe %q holds a clause found nowhere", p.match)
		}
		live = live || strings.Contains(p.match, `"request"`) || strings.Contains(p.match, `"header"`)
	}
	if !live {
		t.Errorf("no probe looks for the words that match: %+v", probes)
	}
	// A rare clause the pool cannot fill from leaves room for the common
	// ones after it: a fill probe that runs only when the pool is short
	// of a page (topUp).
	clauses[0].df, clauses[0].scan = 3, 3
	probes = planProbes(prof, n, clauses)
	if last := probes[len(probes)-1]; !last.fill || !last.topUp || !strings.Contains(last.match, `"request"`) {
		t.Errorf("the plan ends with %+v, want a top-up fill probe over the common words", last)
	}
	// The top-up draws on the clauses the pruned OR left out, not on those
	// it ran: with four rare phrases and one common word, the common word.
	mixed := []clause{
		{match: `"a b"`, df: 3, scan: 30, prio: 5},
		{match: `"c d"`, df: 4, scan: 40, prio: 5},
		{match: `"e f"`, df: 5, scan: 50, prio: 5},
		{match: `"199"`, df: 8, exact: true, scan: 8, prio: 4},
		{match: `"http"`, df: 30000, exact: true, scan: 30000, prio: 2},
	}
	probes = planProbes(prof, n, mixed)
	last := probes[len(probes)-1]
	if !last.fill || !last.topUp || !strings.Contains(last.match, `"http"`) || strings.Contains(last.match, `"a b"`) {
		t.Errorf("the plan ends with %+v, want a top-up over the common word the OR left out", last)
	}
	// A df of 0 for a token with letters the Go tokenizer may fold
	// otherwise than FTS5 (Vietnamese "thi\u1ec7u") is no proof: the
	// clause stays.
	odd := []clause{{match: "\"thi\u1ec7u\"", df: 0, exact: true, prio: 9}}
	if probes := planProbes(prof, n, odd); len(probes) == 0 || !strings.Contains(probes[0].match, "thi\u1ec7u") {
		t.Errorf("probes %+v drop a clause whose df is unknown", probes)
	}
	// Nothing found anywhere: nothing to run.
	for i := range clauses {
		clauses[i].df, clauses[i].scan = 0, 0
	}
	if probes := planProbes(prof, n, clauses); len(probes) != 0 {
		t.Errorf("probes %+v for clauses found nowhere", probes)
	}
}

func TestExtraParts(t *testing.T) {
	m := newMatcher(nil)
	for text, want := range map[string]int{
		"main.go": 0, "service_search.go": 1, "os.ReadFile": 1, "std::io::Read": 0,
		"class HTTPServerConfig": 2, "func (s *Server) readHeaderTimeout": 2, "Plain words only": 0,
	} {
		if got := m.extraParts(text); got != want {
			t.Errorf("extraParts(%q) = %d, want %d", text, got, want)
		}
	}
}
