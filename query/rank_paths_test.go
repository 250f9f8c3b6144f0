package query

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/sources"
)

// TestPathFacts: a path's kept facts are what the functions they stand
// for say of it, before and after the cache has started over.
func TestPathFacts(t *testing.T) {
	paths := []string{
		"net/http/server.go", "os/exec/lp_windows.go", "internal/syscall/unix/at_linux.go",
		"CHANGELOG.md", "docs/changes/v2.md", "package.json", ".github/workflows/ci.yml",
		"src/.hidden/tool.py", "sync/rwmutex.go", "a/b/ReadRequestHeader.java", "Dockerfile",
	}
	stems := map[string]float64{"http": 0.4, "server": 0.3, "mutex": 0.2, "rwmutex": 0.5, "read": 0.1, "request": 0.2}
	check := func() {
		t.Helper()
		for _, p := range paths {
			f := factsOf(p)
			if f.platform != platformOf(p) || f.manifest != manifestOf(p) || f.build != buildOf(p) || f.hidden != hiddenOf(p) || f.changelog != changelogOf(p, "") {
				t.Errorf("factsOf(%q) = %+v: platform %v manifest %v build %v hidden %v changelog %v", p, *f,
					platformOf(p), manifestOf(p), buildOf(p), hiddenOf(p), changelogOf(p, ""))
			}
			var want []string
			for _, w := range nameWords(p) {
				if st := string(sources.PorterStem([]byte(w))); !slices.Contains(want, st) {
					want = append(want, st)
				}
			}
			if !slices.Equal(f.stems, want) {
				t.Errorf("factsOf(%q).stems = %q, want %q", p, f.stems, want)
			}
		}
	}
	check()
	nq := newNameQuery(stems, nil)
	// The question holds every word of server.go's name.
	if got := fileNameShare(nq, "net/http/server.go"); math.Abs(got-0.7-nameCovered) > 1e-9 {
		t.Errorf("fileNameShare(net/http/server.go) = %v, want 0.7 + %v", got, nameCovered)
	}
	if got := fileNameShare(nq, "a/b/ReadRequestHeader.java"); math.Abs(got-0.3) > 1e-9 {
		t.Errorf("fileNameShare(ReadRequestHeader.java) = %v, want 0.3", got)
	}
	// Words written together: a question's word of five letters or more
	// that begins or ends one counts, by its stem or as the question
	// wrote it; a shorter one, or one inside, does not. A name word of
	// four letters or more that begins a question's word counts.
	words := newNameQuery(map[string]float64{"barrier": 0.25, "proxi": 0.25, "read": 0.25, "order": 0.25},
		map[string][]string{"proxi": {"proxy"}, "read": {"read"}})
	abbrev := newNameQuery(map[string]float64{"channel": 0.4, "execut": 0.3, "in": 0.1, "20240101": 0.1, "sprite": 0.1},
		map[string][]string{"execut": {"executable"}})
	for _, c := range []struct {
		nq   *nameQuery
		path string
		want float64
	}{
		{words, "runtime/mbarrier.go", 0.25 + nameCovered},
		{words, "net/http/httputil/reverseproxy.go", 0.25 + nameCovered},
		{words, "barrier/x.go", 0.25},
		{words, "runtime/thread.go", 0},
		{words, "slices/zsortordered.go", 0},
		{words, "runtime/barriers.go", 0.25 + nameCovered},
		{words, "readbarrier/proxy.go", 0.5 + nameCovered},
		{words, "services/reverse_proxy_channel_mbarrier.go", 0.5},
		{words, "barrierset/alpha_beta_gamma_delta.go", 0.25},
		{words, "ordeal/zsortordered.go", 0},
		{abbrev, "runtime/chan.go", 0.4 + nameCovered},
		{abbrev, "os/exec/lp_unix.go", 0.3},
		{abbrev, "a/cha.go", 0},
		{abbrev, "a/2024/x.go", 0},
		{abbrev, "gfx/3dsprite.go", 0.1},
		{abbrev, "a/inline.go", 0},
	} {
		if got := fileNameShare(c.nq, c.path); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("fileNameShare(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	// The first and last four bytes rule out only what namePart would.
	for _, nq := range []*nameQuery{words, abbrev} {
		for _, p := range []string{"runtime/mbarrier.go", "net/http/httputil/reverseproxy.go", "runtime/chan.go",
			"os/exec/lp_unix.go", "readbarrier/proxy.go", "a/inline.go", "barrierx/chanx.go", "xproxy/ychannel.go",
			"services/reverse_proxy_channel_mbarrier.go", "barrierset/alpha_beta_gamma_delta.go", "ordeal/zsortordered.go",
			"gfx/3dsprite.go", "a/2024/x.go"} {
			f := factsOf(p)
			for _, s := range nq.shares {
				if namePart(f.words, s.words) && f.nEnds >= 0 && !nq.sharesEnd(f.ends[:f.nEnds]) {
					t.Errorf("%s: %q is part of a name word but no end is shared", p, s.words)
				}
			}
		}
	}
	// A share is the same sum whatever order the question's stems come
	// in (the unit index's bounds and the final ranking add it apart).
	many := map[string]float64{"server": 0.1, "handler": 0.2, "http": 0.3}
	want := fileNameShare(newNameQuery(many, nil), "http/server_handler.go")
	for range 200 {
		if got := fileNameShare(newNameQuery(many, nil), "http/server_handler.go"); got != want {
			t.Fatalf("fileNameShare(http/server_handler.go) = %v, then %v", want, got)
		}
	}
	if got := fileNameShare(nil, "net/http/server.go"); got != 0 {
		t.Errorf("fileNameShare with no question words = %v", got)
	}
	for i := range pathFactsEntries + 10 {
		factsOf(fmt.Sprintf("gen/f%d.go", i))
	}
	if n := len(pathFactsCache.m); n > pathFactsEntries {
		t.Errorf("the cache holds %d paths, more than its bound %d", n, pathFactsEntries)
	}
	check()
	// Long paths: the cache is bounded by bytes too.
	long := strings.Repeat("very/long/folder/name/", 180)
	for i := range 4000 {
		factsOf(fmt.Sprintf("%s%d.go", long, i))
	}
	if b := pathFactsCache.bytes; b > pathFactsBytes {
		t.Errorf("the cache holds %d bytes, more than its bound %d", b, pathFactsBytes)
	}
	if n := len(pathFactsCache.m); n >= 4000 {
		t.Errorf("the cache kept all %d long paths (%d bytes each)", n, len(long))
	}
	check()
}

// TestNameCovered: a file whose every name word the question holds (by
// its stem, or as a part of a word written together) gets nameCovered
// on top of its share; a generic name (mod.rs, index.ts, __init__.py,
// lib.rs) is named by its folder; numbers need not be asked, a stop word
// must be the question's; a name with
// a word the question lacks gets its share alone, and a file the
// question does not name at all gets nothing.
func TestNameCovered(t *testing.T) {
	nq := newNameQuery(map[string]float64{"segment": 0.3, "pool": 0.2, "hyperlink": 0.3, "base64": 0.1, "base": 0.05, "raw": 0.05},
		map[string][]string{"base64": {"base64"}})
	for _, c := range []struct {
		path string
		want float64
	}{
		{"okio/SegmentPool.kt", 0.5 + nameCovered},
		{"okio/segment_pool.py", 0.5 + nameCovered},
		{"okio/SegmentPoolTest.kt", 0.5},
		{"okio/Segment.kt", 0.3 + nameCovered},
		{"printer/src/hyperlink/mod.rs", 0.3 + nameCovered},
		{"printer/src/hyperlink/index.ts", 0.3 + nameCovered},
		{"pkg/hyperlink/__init__.py", 0.3 + nameCovered},
		{"pkg/hyperlink/main.rs", 0.3},
		{"src/raw.rs", 0.05 + nameCovered},
		{"src/v2/raw.rs", 0.05 + nameCovered},
		{"src/lib.rs", 0},
		{"a/2024.md", 0},
		{"a/b/c.go", 0},
	} {
		if got := fileNameShare(nq, c.path); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("fileNameShare(%s) = %v, want %v (named %q)", c.path, got, c.want, factsOf(c.path).named)
		}
	}
	// A stop word of the name must be one of the question's: "convert a
	// schema to JSON Schema" names to-json-schema.ts, not
	// from-json-schema.ts.
	to := newNameQuery(map[string]float64{"convert": 0.3, "json": 0.3, "schema": 0.4}, nil)
	to.stops = []string{"a", "to"}
	for path, want := range map[string]float64{
		"core/to-json-schema.ts":      0.7 + nameCovered,
		"classic/from-json-schema.ts": 0.7,
		"core/json-schema.ts":         0.7 + nameCovered,
	} {
		if got := fileNameShare(to, path); math.Abs(got-want) > 1e-9 {
			t.Errorf("fileNameShare(%s) = %v, want %v", path, got, want)
		}
	}
}

// A file named for the question gains nameCovered only where its role
// counts fully: a test named for the topic (test/negotiation.js) is the
// test of what is asked, and keeps its name share alone, so it scores
// below half (the test prior) of the same file as source; a pair the
// question does not name scores exactly half. With the unit index and
// without it.
func TestNamedFileRoleCounts(t *testing.T) {
	body := func(fn string) string {
		return "// " + fn + " picks the content type the client prefers: content negotiation.\nfunction " + fn + "(req, res) {\n  return req.accepts(res.types);\n}\n"
	}
	env := newSearchEnv(t)
	env.folder("web", "default", map[string]string{
		"lib/negotiation.js":  body("negotiate"),
		"test/negotiation.js": body("negotiate"),
		"lib/accept.js":       body("pick"),
		"test/accept.js":      body("pick"),
	})
	for _, noUnits := range []bool{false, true} {
		env.engine.noUnits = noUnits
		res := env.search(env.all, QueryRequest{Question: "content negotiation"})
		score := map[string]float64{}
		for _, h := range res.Hits {
			score[h.Path] = h.Score
		}
		for _, p := range []string{"lib/negotiation.js", "test/negotiation.js", "lib/accept.js", "test/accept.js"} {
			if score[p] <= 0 {
				t.Fatalf("unit index off %v: no hit of %s in %v", noUnits, p, firstPaths(res.Hits, 10))
			}
		}
		if r := score["test/accept.js"] / score["lib/accept.js"]; math.Abs(r-rolePriors["test"]) > 1e-6 {
			t.Errorf("unit index off %v: the unnamed test scores %v of its source, want %v", noUnits, r, rolePriors["test"])
		}
		if r := score["test/negotiation.js"] / score["lib/negotiation.js"]; r > rolePriors["test"]-0.01 {
			t.Errorf("unit index off %v: the test named for the question scores %v of its source, want below %v", noUnits, r, rolePriors["test"])
		}
	}
}

// A test word counts in a file's name for a question that names tests as
// a purpose only where it does not mark a test (testNamed): in Plug's
// test.ex and the folder of lib/plug/adapters/test/conn.ex, not in
// server_test.go.
func TestPurposeShare(t *testing.T) {
	for p, want := range map[string]bool{
		"net/http/server_test.go":        true,
		"tests/test_client.py":           true,
		"src/test/java/FooTest.java":     true,
		"src/app.spec.ts":                true,
		"lib/plug/test.ex":               false,
		"src/click/testing.py":           false,
		"net/http/httptest/server.go":    false,
		"lib/plug/adapters/test/conn.ex": false,
	} {
		if got := factsOf(p).testNamed; got != want {
			t.Errorf("factsOf(%q).testNamed = %v, want %v", p, got, want)
		}
	}
	nq := newNameQuery(map[string]float64{"test": 0.5, "server": 0.5}, map[string][]string{"test": {"test"}, "server": {"server"}})
	nq.shares[slices.IndexFunc(nq.shares, func(s stemShare) bool { return s.words[0] == "test" })].purpose = true
	for p, want := range map[string]float64{
		"net/http/server_test.go":     0.5, // server only
		"net/http/httptest/server.go": 0.5, // server: "test" is too short to end a name word
		"lib/plug/test.ex":            0.5,
	} {
		if got, _ := factsOf(p).nameShareSplit(nq); math.Abs(got-want) > 1e-9 {
			t.Errorf("nameShareSplit(%q) = %v, want %v", p, got, want)
		}
	}
}
