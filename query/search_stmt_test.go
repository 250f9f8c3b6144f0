package query

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A search without filters runs every FTS5 statement prepared once per
// engine (unscopedSQL), in every profile: the text it builds is the text
// prepared. A filter puts its conditions into the text, so those are
// prepared where they run.
func TestUnfilteredSearchPreparesNoMatch(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	// Files of several units each, so that best files are searched within
	// their range of rows.
	for i := range 6 {
		var b strings.Builder
		b.WriteString("package lock\n")
		for j := range 6 {
			fmt.Fprintf(&b, "\n// Lock%d%d takes the address lock of zone %d.\nfunc Lock%d%d() { parse(%d) }\n", i, j, j, i, j, j)
		}
		tree[fmt.Sprintf("lock/lock%d.go", i)] = b.String()
	}
	env.folder("go", "default", tree)
	var mu sync.Mutex
	var unprepared []string
	env.engine.unprepared = func(q string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(q, "MATCH") || strings.HasPrefix(q, sqlFileUnits) {
			unprepared = append(unprepared, q)
		}
	}
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := unprepared
		unprepared = nil
		return out
	}
	questions := []string{"address lock zone", "ParseIP", "lock the zone of an address", "parse", "tests for ParseIP"}
	for _, prof := range profiles {
		for _, question := range questions {
			for _, limit := range []int{3, 10} {
				env.search(env.all, QueryRequest{Question: question, Profile: prof.name, Limit: limit})
				if qs := taken(); len(qs) > 0 {
					t.Errorf("%s, %q, limit %d: prepared where it ran: %q", prof.name, question, limit, qs)
				}
			}
		}
	}
	env.search(env.all, QueryRequest{Question: "address lock zone", Filters: &Filters{Languages: []string{"go"}}})
	if len(taken()) == 0 {
		t.Error("a filtered search prepared no MATCH where it ran: the check sees nothing")
	}
}
