package query

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// A small tree where the implementation of a name competes with the code
// that uses it: tests and examples that mention it more often, another
// package's definition of the same name, and a file that repeats it.
var definitionTree = map[string]string{
	"net/ip.go": `package net

// ParseIP parses s as an IP address, returning the result.
func ParseIP(s string) IP {
	return parse(s)
}

func parse(s string) IP { return nil }
`,
	"net/ip_test.go": `package net

var parseIPTests = []struct{ in string }{{"127.0.0.1"}, {"::1"}}

func TestParseIP(t *testing.T) {
	for _, tt := range parseIPTests {
		if ParseIP(tt.in) == nil {
			t.Errorf("ParseIP(%q) = nil", tt.in)
		}
		_ = ParseIP(tt.in)
		_ = ParseIP(tt.in)
	}
}
`,
	"net/parse.go": `package net

// ParseIPList calls ParseIP on each: ParseIP for a v4 address, ParseIP
// for a v6 one, and ParseIP again for a zone.
func ParseIPList(s []string) []IP {
	for _, x := range s {
		_ = ParseIP(x)
	}
	return nil
}
`,
	"net/example_test.go": `package net_test

func ExampleParseIP() {
	fmt.Println(net.ParseIP("192.0.2.1"))
	fmt.Println(net.ParseIP("2001:db8::68"))
	fmt.Println(net.ParseIP("192.0.2"))
}
`,
	"sync/mutex.go": `package sync

// A Mutex is a mutual exclusion lock.
type Mutex struct {
	state int32
	sema  uint32
}

// Lock locks m.
func (m *Mutex) Lock() {}
`,
	"internal/fake/mutex.go": `package fake

// Mutex is a fake lock used by the fake scheduler.
type Mutex struct{ held bool }
`,
	"cmd/vet/testdata/copylock/copylock.go": `package copylock

import "sync"

func BadFunc() {
	var x *sync.Mutex
	p := x
	var y sync.Mutex
	p = &y
	*p = *x
	var t sync.Mutex
	t = *x
	_ = t
	sync.Mutex{}.Lock()
}
`,
	"bufio/scan.go": `package bufio

// ReadRequest reads and parses an incoming request from b.
func ReadRequest(b *Reader) (*Request, error) {
	return readRequest(b)
}
`,
	"bufio/other.go": `package bufio

// readRequest is called by ReadRequest; a request read here calls
// ReadRequest logic and ReadRequest helpers: ReadRequest ReadRequest.
func helper() { ReadRequest(nil); ReadRequest(nil); ReadRequest(nil) }
`,
}

func TestDefinitionsFirst(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", definitionTree)
	for _, tt := range []struct{ question, path, title string }{
		{"ParseIP", "net/ip.go", "func ParseIP"},
		{"net.ParseIP", "net/ip.go", "func ParseIP"},
		{"sync.Mutex", "sync/mutex.go", "type Mutex struct"},
		{"func ReadRequest", "bufio/scan.go", "func ReadRequest"},
		{"ReadRequest", "bufio/scan.go", "func ReadRequest"},
	} {
		res := env.search(env.all, QueryRequest{Question: tt.question})
		if len(res.Hits) == 0 || res.Hits[0].Path != tt.path || res.Hits[0].Title != tt.title {
			got := pathTitles(res.Hits, 4)
			t.Errorf("%q: first hits %v, want %s: %s first", tt.question, got, tt.path, tt.title)
			continue
		}
		// The definition's focus, the line an answer starts it at, is
		// the line that declares it (not its doc comment).
		h := res.Hits[0]
		if h.Focus == nil || h.Text == nil {
			t.Errorf("%q: the definition has no focus", tt.question)
			continue
		}
		lines := strings.Split(*h.Text, "\n")
		if i := h.Focus.StartLine - h.Span.StartLine; i < 0 || i >= len(lines) || !strings.Contains(lines[i], tt.title) {
			t.Errorf("%q: focus %+v is not the line declaring %s:\n%s", tt.question, *h.Focus, tt.title, *h.Text)
		}
	}
}

// A name the question writes with upper-case letters is defined where
// the title spells it so: AppendIndent before appendIndent, which its
// file names more often; written in lower case, the other way round.
func TestDefinitionInTheQuestionsCase(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		"json/indent.go": `package json

// appendIndent appends to dst an indented form of src: appendIndent
// indents each level, and appendIndent's indent is the prefix.
func appendIndent(dst, src []byte, indent string) []byte {
	return append(dst, src...) // appendIndent indent indent
}

// appendIndentLevel is appendIndent for one level.
func appendIndentLevel(dst []byte) []byte { return appendIndent(dst, nil, "") }
`,
		"json/encode.go": `package json

// AppendIndent appends the indented form of src to dst.
func AppendIndent(dst, src []byte) ([]byte, error) {
	return appendIndent(dst, src, "\t"), nil
}
`,
	})
	wantFirstTitle(t, env, "AppendIndent", "func AppendIndent")
	wantFirstTitle(t, env, "json.AppendIndent", "func AppendIndent")
	wantFirstTitle(t, env, "appendIndent", "func appendIndent")
}

// A question of one word written with a capital is a name: "Pipe" asks
// for func Pipe, before a file that says pipe more; "pipe" is a word.
func TestCapitalizedWordIsAName(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		"net/pipe.go": `package net

// pipeAddr is the address of a pipe: a pipe's end names the pipe.
type pipeAddr struct{}

// Network names the pipe network: a pipe, for pipes.
func (pipeAddr) Network() string { return "pipe" }
`,
		"io/pipe.go": `package io

// Pipe creates a synchronous in-memory pipe.
func Pipe() (*PipeReader, *PipeWriter) { return nil, nil }
`,
	})
	wantFirstTitle(t, env, "Pipe", "func Pipe")
	for q, names := range map[string]int{"Pipe": 1, "pipe": 0, "The": 0, "Tests": 0, "Pipe reader": 0} {
		if pq := parseQuestion(q); len(pq.names) != names {
			t.Errorf("%q: names %+v, want %d", q, pq.names, names)
		}
	}
}

// wantFirstTitle searches question and checks that its first hit has
// title.
func wantFirstTitle(t *testing.T, env *searchEnv, question, title string) Ranked {
	t.Helper()
	res := env.search(env.all, QueryRequest{Question: question})
	if len(res.Hits) == 0 || res.Hits[0].Title != title {
		t.Errorf("%q: first hits %v, want %s first", question, pathTitles(res.Hits, 3), title)
	}
	return res
}

// A question that asks for tests or examples gets them as it would
// without the role priors.
func TestRolesAskedForKeepTheirRank(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", definitionTree)
	res := env.search(env.all, QueryRequest{Question: "example ParseIP"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "net/example_test.go" {
		t.Errorf("first hits %v, want net/example_test.go first", firstPaths(res.Hits, 4))
	}
	// Of the tests, the one named for the name comes first; also when
	// the question names tests as a purpose, where source counts fully
	// beside them (TestTestsAsPurpose).
	for _, q := range []string{"tests for ParseIP", "where is ParseIP used in tests"} {
		res = env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) == 0 || res.Hits[0].Title != "func TestParseIP" {
			got := pathTitles(res.Hits, 4)
			t.Errorf("%q: first hits %v, want func TestParseIP first", q, got)
		}
	}
}

// One file's units do not fill a page: each further unit of a file counts
// half, so the second file's best unit comes before the first file's
// third.
func TestSameFileSaturation(t *testing.T) {
	env := newSearchEnv(t)
	var big strings.Builder
	big.WriteString("package big\n\n")
	for i := range 6 {
		big.WriteString("// retry backoff with jitter, retry backoff again.\nfunc retry" + string(rune('A'+i)) + "() {}\n\n")
	}
	env.folder("go", "default", map[string]string{
		"big/big.go":     big.String(),
		"small/small.go": "package small\n\n// retry with backoff.\nfunc Retry() {}\n",
	})
	res := env.search(env.all, QueryRequest{Question: "retry backoff jitter"})
	got := paths(res.Hits)
	at := -1
	for i, p := range got {
		if p == "small/small.go" {
			at = i
			break
		}
	}
	if at < 0 || at > 2 {
		t.Fatalf("hits %v: small/small.go at %d, want within the first three", got, at)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score > res.Hits[i-1].Score {
			t.Fatalf("scores not descending at %d: %v", i, res.Hits)
		}
	}
}

func TestDeclaredNames(t *testing.T) {
	for _, tt := range []struct{ title, first, last string }{
		{"func ParseIP", "parseip", "parseip"},
		{"func (m *Mutex) Lock", "lock", "lock"},
		{"type Mutex struct", "mutex", "mutex"},
		{"pub fn new", "new", "new"},
		{"class HTTPServer", "httpserver", "httpserver"},
		{"def parse_qs", "parse_qs", "parse_qs"},
		{"static int add", "int", "add"},
		{"export default async function handler", "handler", "handler"},
		{"comments", "comments", "comments"},
		{"var labelsOnce sync.Once", "labelsonce", "labelsonce"},
		{"let config: Settings", "config", "config"},
		{"class HTTPServer(BaseServer)", "httpserver", "httpserver"},
		{"const int max_len", "int", "max_len"},
		{"impl Display for Mutex", "display", "mutex"},
		{"typedef struct node node_t", "node", "node_t"},
		{"", "", ""},
	} {
		first, last := declaredNames(tt.title)
		if first != tt.first || last != tt.last {
			t.Errorf("declaredNames(%q) = %q, %q; want %q, %q", tt.title, first, last, tt.first, tt.last)
		}
	}
}

func TestQuestionNames(t *testing.T) {
	for _, tt := range []struct {
		question string
		want     []string // name, or qualifier.name
	}{
		{"ParseIP", []string{"parseip"}},
		{"how does net.ParseIP handle zones", []string{"net.parseip"}},
		{"func ReadRequest", []string{"readrequest"}},
		{"def main", []string{"main"}},
		{"parse_qs in urllib", []string{"parse_qs"}},
		{"reader writer lock", nil},
		{"class for the parser", nil}, // a stop word after the keyword
		{"If-Modified-Since header", nil},
		{"std::vector growth", []string{"std.vector"}},
	} {
		pq := parseQuestion(tt.question)
		var got []string
		for _, n := range pq.names {
			got = append(got, strings.Join(append(n.qualifier, n.name), "."))
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q: names %v, want %v", tt.question, got, tt.want)
		}
	}
}

// pathTitles names the first n hits by path and title, for messages.
func pathTitles(hits []Hit, n int) []string {
	var out []string
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.Path+": "+h.Title)
	}
	return out
}

func firstPaths(hits []Hit, n int) []string {
	return paths(hits[:min(n, len(hits))])
}

// wantFirst checks that the first hit for question is in the file want;
// why says what the case is about.
func (env *searchEnv) wantFirst(t *testing.T, question, want, why string) {
	t.Helper()
	res := env.search(env.all, QueryRequest{Question: question})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != want {
		t.Errorf("%s: first hit for %q is %v, want %s", why, question, got, want)
	}
}

// A file whose units together hold the question beats a unit that repeats
// one of its words: the file's evidence counts.
func TestWholeFileEvidence(t *testing.T) {
	env := newSearchEnv(t)
	// Each word of the question in one unit of one file, and each word in
	// no other file (the same idf for all four); units big enough to stand
	// alone.
	// Both files are the same size, so that their lengths do not decide.
	body := strings.Repeat("\tx = append(x, y) // keep going\n", 80)
	pool, repeat := "package pool\n\n", "package misc\n\n"
	for _, w := range []string{"idle", "health", "lifetime"} {
		pool += "// " + w + " matters, " + w + " here.\nfunc F" + w + "() {\n" + body + "}\n\n"
		repeat += "// nothing matters here at all.\nfunc F" + w + "() {\n" + body + "}\n\n"
	}
	repeat += "// connection connection connection connection connection connection.\nfunc noise() {}\n"
	env.folder("go", "default", map[string]string{
		"pool/pool.go":   pool,
		"misc/repeat.go": repeat,
	})
	res := env.search(env.all, QueryRequest{Question: "idle connection health lifetime"})
	if n := len(res.Hits); n < 4 {
		t.Fatalf("%d hits, want the three units of pool.go and repeat.go", n)
	}
	if res.Hits[0].Path != "pool/pool.go" {
		t.Fatalf("first hits %v, want pool/pool.go first", firstPaths(res.Hits, 4))
	}
}

// The name index finds files by the words of their names and folders,
// best share first, and only within the caller's collections.
func TestNameIndexLookup(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("a", "a", map[string]string{
		"bytes/buffer.go":   "package bytes\n\n// A growable array of bytes.\ntype Buffer struct{}\n",
		"bufio/scan.go":     "package bufio\n\ntype Scanner struct{}\n",
		"strings/buffer.go": "package strings\n\n// unrelated text\n",
	})
	env.folder("b", "b", map[string]string{
		"bytes/buffer.go": "package bytes\n\n// another collection's buffer\n",
	})
	ctx := context.Background()
	tx, release, err := env.engine.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	gen, _, err := readGeneration(ctx, env.engine, tx)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := env.engine.names.get(ctx, env.engine, tx, gen)
	if err != nil {
		t.Fatal(err)
	}
	stems := map[string]float64{"byte": 0.5, "buffer": 0.5}
	got := ix.lookup(stems, &scopeFilter{collections: []string{"a"}})
	var names []string
	for _, f := range got {
		names = append(names, f[1])
	}
	want := []string{"bytes/buffer.go", "strings/buffer.go"}
	if !slices.Equal(names, want) {
		t.Fatalf("lookup = %v, want %v (collection a only, the whole name first)", names, want)
	}
	again, err := env.engine.names.get(ctx, env.engine, tx, gen)
	if err != nil || again != ix {
		t.Fatalf("the same generation built the index again (%v)", err)
	}
}

// Units that completion reads for a named file obey the request's
// filters and the caller's collections.
func TestCompletedFilesKeepTheScope(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("a", "a", map[string]string{
		"docs/notes.md": "# Notes\n\nNothing here about it.\n",
	})
	env.folder("b", "b", map[string]string{
		"buffer/buffer.go": "package buffer\n\n// Buffer holds bytes.\ntype Buffer struct{}\n",
	})
	onlyA := workspace.Principal{ID: "a", Grant: workspace.GrantRead, Collections: []string{"a"}}
	res := env.search(onlyA, QueryRequest{Question: "buffer bytes"})
	for _, h := range res.Hits {
		if h.Path == "buffer/buffer.go" {
			t.Fatalf("a caller of collection a got %s of collection b", h.Path)
		}
	}
	res = env.search(env.all, QueryRequest{Question: "buffer bytes", Filters: &Filters{Languages: []string{"markdown"}}})
	for _, h := range res.Hits {
		if h.Language != "markdown" {
			t.Fatalf("a markdown-only search got %s (%s)", h.Path, h.Language)
		}
	}
}

// Of the units of a role the question asks for, the one whose title names
// the name comes first, before one that only calls it often.
func TestAskedRoleNamedFirst(t *testing.T) {
	env := newSearchEnv(t)
	var table strings.Builder
	table.WriteString("package net\n\nvar parseCIDRTests = []struct{ ip IP }{\n")
	for i := range 60 {
		fmt.Fprintf(&table, "\t{ParseIP(\"10.0.0.%d\")},\n", i)
	}
	table.WriteString("}\n\n")
	table.WriteString("func TestParseIP(t *testing.T) {\n\tif ParseIP(\"127.0.0.1\") == nil {\n\t\tt.Fatal(\"nil\")\n\t}\n}\n")
	env.folder("go", "default", map[string]string{
		"net/ip_test.go": table.String(),
		"net/ip.go":      "package net\n\n// ParseIP parses s.\nfunc ParseIP(s string) IP { return nil }\n",
	})
	res := env.search(env.all, QueryRequest{Question: "tests for ParseIP"})
	if len(res.Hits) == 0 || res.Hits[0].Title != "func TestParseIP" {
		got := pathTitles(res.Hits, 3)
		t.Fatalf("first hits %v, want func TestParseIP first", got)
	}
}

// A qualified name's definition in the package its qualifier names comes
// before one in a package of the same name deeper down.
func TestQualifierNamesThePackage(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		"sync/mutex.go":          "package sync\n\n// A Mutex is a lock.\ntype Mutex struct{ state int32 }\n",
		"internal/sync/mutex.go": "package sync\n\n// A Mutex is the lock behind the sync Mutex.\ntype Mutex struct{ state int32 }\n",
	})
	res := env.search(env.all, QueryRequest{Question: "sync.Mutex"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "sync/mutex.go" {
		t.Fatalf("first hits %v, want sync/mutex.go first", firstPaths(res.Hits, 3))
	}
}

// A file made for one platform ranks after the portable one, unless the
// question names the platform.
func TestPlatformVariantsAfterPortableCode(t *testing.T) {
	env := newSearchEnv(t)
	body := "package x509\n\n// verify the certificate chain up to a trusted root, checking each signature.\nfunc %s() {}\n"
	env.folder("go", "default", map[string]string{
		"x509/verify.go":       fmt.Sprintf(body, "verifyChain"),
		"x509/root_windows.go": fmt.Sprintf(body, "verifyChainWindows") + "\n// verify the certificate chain again: trusted root certificate chain.\nfunc more() {}\n",
	})
	res := env.search(env.all, QueryRequest{Question: "verify a certificate chain up to a trusted root"})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != "x509/verify.go" {
		t.Errorf("first hit %v, want x509/verify.go", got)
	}
	res = env.search(env.all, QueryRequest{Question: "verify a certificate chain up to a trusted root on windows"})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != "x509/root_windows.go" {
		t.Errorf("naming the platform: first hit %v, want x509/root_windows.go", got)
	}
}

func TestPlatformOf(t *testing.T) {
	for p, want := range map[string]bool{
		"net/fd_windows.go": true, "runtime/sys_linux_amd64.s": true, "os/exec/lp_unix.go": true,
		"src/win32/io.c": true, "library/std/src/sys/unix/fs.rs": true,
		"windows.go": false, "net/dial.go": false, "cmd/go/main.go": false, "arm/README.md": true,
	} {
		if got := platformOf(p); got != want {
			t.Errorf("platformOf(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestStopwordNamingAFile(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		// Both files hold the question's other words alike; only once.go
		// is named for its stop word.
		"syncx/once.go":  "package syncx\n\n// Once runs a function exactly one time for concurrent callers.\ntype Once struct{ done bool }\n\n// Do calls the function f only once.\nfunc (o *Once) Do(f func()) {}\n",
		"syncx/guard.go": "package syncx\n\n// guard runs a function exactly one time for concurrent callers.\nfunc guard(f func()) {}\n\n// wait calls the function f again.\nfunc wait(f func()) {}\n",
	})
	res := env.search(env.all, QueryRequest{Question: "run a function exactly once even with concurrent callers"})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != "syncx/once.go" {
		t.Errorf("first hit %v, want syncx/once.go: a stop word that names a file counts", got)
	}
	// No file is named for a stop word: it stays one (the question's
	// only word is then searched, as a question of stop words is).
	res = env.search(env.all, QueryRequest{Question: "guard against the callers"})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != "syncx/guard.go" {
		t.Errorf("first hit %v, want syncx/guard.go", got)
	}
}

func TestDefinitionScaledByTheNamesShare(t *testing.T) {
	env := newSearchEnv(t)
	files := map[string]string{
		// ip.go defines IPv4 and says IPv4 and IPv6 often; dial.go is
		// about the rest of the question.
		"netx/ip.go":   "package netx\n\n// IPv4 returns the IP address (in 16-byte form) of the IPv4 address a.b.c.d; see IPv6.\nfunc IPv4(a, b, c, d byte) IP { return nil }\n\n// IPv6 addresses and IPv4 addresses in IPv6 form.\ntype IP []byte\n",
		"netx/dial.go": "package netx\n\n// dialParallel races a primary and a fallback network address, the happy eyeballs way:\n// dial the address, then the fallback after a delay.\nfunc dialParallel(address string) {}\n\n// dial a network address between families\nfunc dialSerial(address string) {}\n",
	}
	// IPv4 and IPv6 are common words of this code, as in any network
	// stack.
	for i := range 8 {
		files[fmt.Sprintf("netx/use%d.go", i)] = fmt.Sprintf("package netx\n\n// route%d picks IPv4 or IPv6.\nfunc route%d() {}\n", i, i)
	}
	env.folder("go", "default", files)
	res := env.search(env.all, QueryRequest{Question: "dial a network address with a happy eyeballs fallback between IPv4 and IPv6"})
	if got := firstPaths(res.Hits, 1); len(got) == 0 || got[0] != "netx/dial.go" {
		t.Errorf("first hit %v, want netx/dial.go: a name among many words is one word of the topic", got)
	}
	// The name alone, or with a word, still gets its definition first.
	for _, q := range []string{"IPv4", "IPv4 address"} {
		res = env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) == 0 || res.Hits[0].Path != "netx/ip.go" || !strings.Contains(res.Hits[0].Title, "IPv4") {
			t.Errorf("%q: first hit %+v, want the definition of IPv4", q, res.Hits[:min(1, len(res.Hits))])
		}
	}
}

// A question that is a name, its whole form with its parts, is all name:
// its definition gains the whole boost. (The whole form once did not
// count, and "ParseIP" gained 0.78 of it; fewer of 300 names had their
// definition first.)
func TestDefinitionScaleOfANameAlone(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", definitionTree)
	for _, question := range []string{"ParseIP", "sync.Mutex", "func ReadRequest", "ReadRequest", "net.ParseIP"} {
		q, _, release := indexedQuery(t, env, question)
		s := q.definitionScale()
		release()
		if s != 1 {
			t.Errorf("%q: definition scale %.3f, want 1", question, s)
		}
	}
}

// A question that is the name of a test or an example asks for that
// role, and the unit that declares the name is the one it names, before
// a longer name that holds it (ExampleOnceValues, which says OnceValue
// more often, for "ExampleOnceValue").
func TestNamedTestDefinedFirst(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		"sync/example_test.go": `package sync_test

// ExampleOnceValues shows OnceValues: OnceValue for two values, a
// OnceValue pair; see ExampleOnceValue.
func ExampleOnceValues() {
	f := sync.OnceValues(read) // OnceValue OnceValue
	_ = f
}

func ExampleOnceValue() {
	once := sync.OnceValue(func() int { return 1 })
	_ = once
}
`,
		"sync/once.go": `package sync

// OnceValue returns a function that calls f once.
func OnceValue[T any](f func() T) func() T { return f }
`,
	})
	full := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, Exhaustive: true}
	for _, name := range []string{"ExampleOnceValue", "ExampleOnceValues"} {
		res := wantFirstTitle(t, env, name, "func "+name)
		// The unit index's bound holds the boost: the page is the
		// exhaustive ranking's.
		ex, err := full.Search(context.Background(), env.all, QueryRequest{Question: name})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := pathTitles(res.Hits, 10), pathTitles(ex.Hits, 10); len(res.Hits) == 0 || res.Hits[0].EvidenceID != ex.Hits[0].EvidenceID || !slices.Equal(a, b) {
			t.Errorf("%q: pooled %v, exhaustive %v", name, a, b)
		}
	}
}

func TestMethodQualifiedByItsType(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", map[string]string{
		// Two types named Buffer, in two packages; the question names the
		// package, the type and the method.
		"bytes/buffer.go":               "package bytes\n\n// A Buffer is a variable-sized buffer of bytes.\ntype Buffer struct{ buf []byte }\n\n// WriteString appends the contents of s to the buffer.\nfunc (b *Buffer) WriteString(s string) (int, error) { return 0, nil }\n",
		"log/internal/buffer/buffer.go": "package buffer\n\n// Buffer is a byte buffer of a logger's buffer pool.\ntype Buffer []byte\n\n// WriteString appends s to the buffer; the buffer grows.\nfunc (b *Buffer) WriteString(s string) (int, error) { return 0, nil }\n",
		// A class method in Python: the class is the heading above it.
		"py/buffers.py": "class Buffer:\n    \"\"\"A growable buffer.\"\"\"\n\n    def write_string(self, s):\n        \"\"\"Append s.\"\"\"\n        pass\n\n\nclass Writer:\n    \"\"\"Writes to a file.\"\"\"\n\n    def write_string(self, s):\n        \"\"\"Append s to the buffer of the file.\"\"\"\n        pass\n",
	})
	res := env.search(env.all, QueryRequest{Question: "bytes.Buffer.WriteString"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "bytes/buffer.go" || !strings.Contains(res.Hits[0].Title, "WriteString") {
		t.Errorf("bytes.Buffer.WriteString: first hit %+v, want bytes/buffer.go's WriteString", res.Hits[:min(1, len(res.Hits))])
	}
	res = env.search(env.all, QueryRequest{Question: "Buffer.write_string"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "py/buffers.py" || res.Hits[0].Span.StartLine > 6 {
		t.Errorf("Buffer.write_string: first hit %+v, want the method of class Buffer", res.Hits[:min(1, len(res.Hits))])
	}
}

// Only the files in the caller's scope make a stop word a name: a search
// of collection b ranks alike whatever collection a holds.
func TestStopwordNamesOnlyInScope(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("a", "a", map[string]string{"syncx/once.go": "package syncx\n\n// Once runs a function one time.\ntype Once struct{}\n"})
	env.folder("b", "b", map[string]string{"guard.go": "package guard\n\n// guard runs a function once.\nfunc guard() {}\n"})
	ctx := context.Background()
	for _, c := range []struct {
		scope scopeFilter
		kept  bool
	}{{scopeFilter{}, true}, {scopeFilter{collections: []string{"a"}}, true}, {scopeFilter{collections: []string{"b"}}, false}} {
		tx, release, err := env.engine.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pq := parseQuestion("run a function once")
		prof, _ := profileByName(DefaultProfile)
		if _, err := env.engine.prepareQuery(ctx, tx, prof, &pq, &c.scope); err != nil {
			t.Fatal(err)
		}
		release()
		for _, tm := range pq.terms {
			if tm.token == "once" && tm.stop == c.kept {
				t.Errorf("scope %v: once is a stop word %v, want %v", c.scope.collections, tm.stop, !c.kept)
			}
		}
	}
}

func TestReceiverType(t *testing.T) {
	for recv, want := range map[string]string{
		"b *Buffer": "Buffer", "*Buffer": "Buffer", "s *Set[T]": "Set", "Map[K, V]": "Map",
		"m *Map[K, V]": "Map", "r Root": "Root", "": "",
	} {
		if got := receiverType(recv); got != want {
			t.Errorf("receiverType(%q) = %q, want %q", recv, got, want)
		}
	}
}

// A change log ranks after the code and the documentation that hold the
// same words, unless the question asks about releases.
func TestChangelogAfterTheImplementation(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("r", "default", map[string]string{
		"CHANGES.rst":     "Version 2.1\n-----------\n\n- Redirects are followed with the method changed on a 303.\n- Redirects keep the method on a 307 and 308; redirects follow.\n",
		"src/sessions.py": "class Session:\n    def rebuild_method(self, prepared, response):\n        \"\"\"When a redirect is followed, change the method as browsers do.\"\"\"\n        if response.status_code == 303:\n            prepared.method = 'GET'\n",
	})
	env.wantFirst(t, "how are redirects followed and the method changed", "src/sessions.py", "the implementation")
	env.wantFirst(t, "which release changed how redirects are followed", "CHANGES.rst", "asking about releases")
}

func TestChangelogOf(t *testing.T) {
	for _, tt := range []struct {
		path, kind string
		want       bool
	}{
		{"CHANGELOG.md", sources.KindMarkdown, true}, {"HISTORY.rst", sources.KindText, true},
		{"History.md", sources.KindMarkdown, true}, {"NEWS", sources.KindText, true},
		{"docs/whatsnew/3.12.rst", sources.KindText, true}, {"changelog.d/123.bugfix.md", sources.KindMarkdown, true},
		{"src/history.ts", sources.KindCode, false}, {"docs/history-api.md", sources.KindMarkdown, false},
		{"README.md", sources.KindMarkdown, false}, {"changes/detector.go", sources.KindCode, false},
		{"doc/ChangeLog-old.md", sources.KindMarkdown, true}, {"CHANGES-2.x.txt", sources.KindText, true},
		{"HISTORY_v1.rst", sources.KindText, true}, {"news-feed.md", sources.KindMarkdown, false},
		{"changes_api.md", sources.KindMarkdown, false},
	} {
		if got := changelogOf(tt.path, tt.kind); got != tt.want {
			t.Errorf("changelogOf(%q, %s) = %v, want %v", tt.path, tt.kind, got, tt.want)
		}
	}
}

// A title that qualifies the name itself (res.sendFile = function …)
// defines the qualified name as fully as a method under its class.
func TestTitleQualifiedDefinition(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("e", "default", map[string]string{
		"lib/response.js": "var res = module.exports = {};\n\n" +
			"/** Transfer the file at the given path, as an attachment: sendFile with a disposition. */\nres.download = function download(path) {\n  this.sendFile(path, { headers: { 'Content-Disposition': 'attachment' } });\n  return this.sendFile(path);\n};\n\n" +
			"/** Transfer the file at the given path. */\nres.sendFile = function sendFile(path, options) {\n  send(this.req, path, options).pipe(this);\n};\n",
	})
	res := env.search(env.all, QueryRequest{Question: "res.sendFile"})
	if len(res.Hits) == 0 || res.Hits[0].Title != "res.sendFile" {
		var titles []string
		for _, h := range res.Hits {
			titles = append(titles, h.Title)
		}
		t.Errorf("first hit %v, want the unit titled res.sendFile", titles)
	}
}

// A file without kept counts (indexed before they were kept) has its size
// read for the candidates of its units, which rerankFiles normalizes its
// pooled units' sum by; a file with them takes its size from them.
func TestFileSizesOfFilesWithoutCounts(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("d", "default", definitionTree)
	ctx := context.Background()
	q, _, tx, release := indexedQueryTx(t, env, "ParseIP")
	defer release()
	seqs, err := scanIDs(tx.QueryContext(ctx, `SELECT seq FROM evidence WHERE leaf = 1`))
	if err != nil || len(seqs) == 0 {
		t.Fatalf("units: %d, %v", len(seqs), err)
	}
	cands, err := env.engine.fetchCandidates(ctx, tx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]*keptFile{}
	first := fileKeyOf(cands[0].sourceID, cands[0].path)
	kept[first] = &keptFile{tf: make([]float64, len(q.terms)), bytes: 1}
	if err := env.engine.fileSizes(ctx, tx, kept, cands); err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT size FROM files WHERE source_id = ? AND path = ?`, c.sourceID, c.path).Scan(&size); err != nil {
			t.Fatal(err)
		}
		switch {
		case fileKeyOf(c.sourceID, c.path) == first && c.fileBytes != 0:
			t.Errorf("%s: size %d read, but its kept counts hold it", c.path, c.fileBytes)
		case fileKeyOf(c.sourceID, c.path) != first && c.fileBytes != size:
			t.Errorf("%s: size %d, want %d", c.path, c.fileBytes, size)
		}
	}
}

// In a source that holds code, its documentation counts ×docsBesideCode
// unless the question asks for documentation; in a source of notes (no
// code) or of a manual with a few scripts, the same document keeps its
// score. With the unit index and without it. (The document's name is
// not the question's: one named for it gains nameCovered only where its
// role counts fully, TestNamedFileRoleCounts.)
func TestDocsBesideCode(t *testing.T) {
	doc := "# Proxies\n\nProxies are read from the environment variables HTTP_PROXY and HTTPS_PROXY.\n"
	code := func(n int, extra map[string]string) map[string]string {
		files := map[string]string{"docs/network.md": doc}
		for i := range n {
			files[fmt.Sprintf("src/mod%d.py", i)] = fmt.Sprintf("def helper%d():\n    return %d\n", i, i)
		}
		maps.Copy(files, extra)
		return files
	}
	env := newSearchEnv(t)
	proj := env.folder("proj", "default", code(codeSourceFiles-1, map[string]string{
		"src/utils.py": "def get_environ_proxies(url):\n    \"\"\"Return the proxies of the environment.\"\"\"\n    return {}\n",
	}))
	notes := env.folder("notes", "default", code(0, nil))
	manual := env.folder("manual", "default", code(codeSourceFiles-1, nil))
	scoreOf := func(res Ranked, src string) float64 {
		t.Helper()
		for _, h := range res.Hits {
			if h.SourceID == src && h.Path == "docs/network.md" {
				return h.Score
			}
		}
		t.Fatalf("no docs/network.md of %s in %v", src, firstPaths(res.Hits, 10))
		return 0
	}
	for _, noUnits := range []bool{false, true} {
		env.engine.noUnits = noUnits
		for _, tt := range []struct {
			question string
			ratio    float64
		}{
			{"proxies read from environment variables", docsBesideCode},
			{"docs on proxies read from environment variables", 1},
		} {
			res := env.search(env.all, QueryRequest{Question: tt.question})
			inCode, inNotes, inManual := scoreOf(res, proj), scoreOf(res, notes), scoreOf(res, manual)
			if math.Abs(inCode/inNotes-tt.ratio) > 1e-6 || math.Abs(inManual/inNotes-1) > 1e-6 {
				t.Errorf("unit index off %v, %q: the document scores %v beside code, %v in notes and %v in a manual with scripts; want a ratio of %v beside code, 1 in the manual",
					noUnits, tt.question, inCode, inNotes, inManual, tt.ratio)
			}
		}
	}
}

// A question that asks for a role asks for the files whose names name
// it too: a module of the source that serves tests (testing.py, a
// testutil package) is not ranked down as "not a test". (Scaled by
// otherRoles, testing.py would rank below the test.)
func TestFileNamedForAskedRole(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("proj", "default", map[string]string{
		"src/pkg/testing.py": "class Runner:\n    \"\"\"Invoke a command in tests and capture its output.\n\n    The output of a command invoked in tests is captured.\"\"\"\n\n    def invoke(self, cli):\n        return cli()\n",
		"src/pkg/core.py":    "class Command:\n    \"\"\"A command line command.\"\"\"\n\n    def main(self):\n        return 0\n",
		"tests/test_core.py": "def test_main():\n    \"\"\"Invoke a command and capture its output.\"\"\"\n    assert Command().main() == 0\n",
	})
	for _, noUnits := range []bool{false, true} {
		env.engine.noUnits = noUnits
		res := env.search(env.all, QueryRequest{Question: "invoke a command in tests and capture its output"})
		if got := firstPaths(res.Hits, 3); len(got) == 0 || got[0] != "src/pkg/testing.py" {
			t.Errorf("unit index off %v: first hits %v, want src/pkg/testing.py first", noUnits, got)
		}
	}
	for w, want := range map[string]uint8{
		"testing": roleBit("test"), "testutil": roleBit("test"), "tests": roleBit("test"),
		"vendor": roleBit("vendored"), "fixtures": roleBit("testdata"), "examples": roleBit("example"),
		"latest": 0, "contest": 0, "runner": 0, "test": roleBit("test"), "special": 0, "sampler": 0,
		"doc": roleBit(roleDocumentation), "testdata": roleBit("test") | roleBit("testdata"),
		"general": 0, "generic": 0, "generator": 0, "tutorials": roleBit(roleDocumentation),
	} {
		if got := namedRoles(w); got != want {
			t.Errorf("namedRoles(%q) = %b, want %b", w, got, want)
		}
	}
}

// A Rust test written inside the source file it tests ranks as a test:
// after the implementation, unless the question asks for tests.
func TestInlineTestsRankAsTests(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("crate", "default", map[string]string{
		"src/format.rs": `/// Formats a hyperlink to a file for the terminal.
pub fn format_hyperlink(path: &str) -> String {
    format!("file://{}", path)
}

#[cfg(test)]
#[test]
fn test_format_hyperlink() {
    // format a hyperlink to a file: the hyperlink format of the terminal
    assert_eq!(format_hyperlink("/a"), "file:///a");
    assert_eq!(format_hyperlink("/b"), "file:///b");
}
`,
	})
	for _, noUnits := range []bool{false, true} {
		env.engine.noUnits = noUnits
		for question, want := range map[string]string{
			"format a hyperlink to a file for the terminal": "pub fn format_hyperlink",
			"tests of the hyperlink format":                 "fn test_format_hyperlink",
		} {
			res := env.search(env.all, QueryRequest{Question: question})
			if len(res.Hits) == 0 || res.Hits[0].Title != want {
				var got []string
				for _, h := range res.Hits[:min(3, len(res.Hits))] {
					got = append(got, fmt.Sprintf("%s %v", h.Title, h.Score))
				}
				t.Errorf("unit index off %v, %q: first hits %v, want %s first", noUnits, question, got, want)
			}
		}
	}
}

// A question that names tests as a purpose ("… for tests") asks for the
// code that serves tests as much as for the tests: the support code is
// not ranked below the tests that use it.
func TestTestsAsPurpose(t *testing.T) {
	env := newSearchEnv(t)
	tree := map[string]string{
		"testing/fstest/mapfs.go": `package fstest

// A MapFS is a simple in-memory file system for use in tests,
// represented as a map from path names to information about the
// files or directories they represent.
type MapFS map[string]*MapFile

// Open opens the named file.
func (fsys MapFS) Open(name string) (fs.File, error) { return nil, nil }
`,
	}
	for i, name := range []string{"os/os_test.go", "io/fs/walk_test.go", "embed/embed_test.go"} {
		tree[name] = fmt.Sprintf(`package test%d

// TestFS%d walks a test tree held in an in-memory file system.
func TestFS%d(t *testing.T) {
	fsys := fstest.MapFS{"a": {}, "b": {}}
	if err := testFS(fsys); err != nil {
		t.Fatal(err)
	}
}
`, i, i, i)
	}
	env.folder("go", "default", tree)
	for _, q := range []string{"in-memory file system for tests", "an in-memory file system used in unit tests"} {
		res := env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) == 0 || res.Hits[0].Path != "testing/fstest/mapfs.go" {
			t.Errorf("%q: first hits %v, want testing/fstest/mapfs.go first", q, firstPaths(res.Hits, 4))
		}
	}
	// Tests asked for as such still come first.
	res := env.search(env.all, QueryRequest{Question: "tests of the in-memory file system"})
	if len(res.Hits) == 0 || res.Hits[0].Role != "test" {
		t.Errorf("tests asked for: first hits %v, want a test first", firstPaths(res.Hits, 4))
	}
}

// "test" before the plain noun of a thing ("a test HTTP server") names
// what serves tests, as "for tests" does: the code that starts one ranks
// above the tests that use it; "test cases" still asks for tests.
func TestTestAsModifier(t *testing.T) {
	env := newSearchEnv(t)
	tree := map[string]string{
		"net/http/httptest/server.go": `package httptest

// A Server is an HTTP server listening on a system-chosen port on the
// local loopback interface, for use in end-to-end HTTP tests.
type Server struct {
	URL string
}

// NewServer starts and returns a new Server.
func NewServer(handler http.Handler) *Server {
	ts := &Server{}
	ts.Start()
	return ts
}
`,
	}
	for i, name := range []string{"net/http/client_test.go", "net/http/serve_test.go", "net/rpc/server_test.go"} {
		tree[name] = fmt.Sprintf(`package test%d

// TestServer%d checks what a handler serves over HTTP.
func TestServer%d(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(serve))
	defer ts.Close()
	res, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}
`, i, i, i)
	}
	env.folder("go", "default", tree)
	for _, q := range []string{"start a test HTTP server", "test HTTP server"} {
		res := env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) == 0 || res.Hits[0].Path != "net/http/httptest/server.go" {
			t.Errorf("%q: first hits %v, want net/http/httptest/server.go first", q, firstPaths(res.Hits, 4))
		}
	}
	res := env.search(env.all, QueryRequest{Question: "test cases for the HTTP server"})
	if len(res.Hits) == 0 || res.Hits[0].Role != "test" {
		t.Errorf("test cases: first hits %v, want a test first", firstPaths(res.Hits, 4))
	}
}

// A question that names tests as a purpose and no name ranks what serves
// tests (a module named for them: Plug's test.ex) above the tests named
// for what they test (conn_test.exs), which use it.
func TestTestsAsPurposeBeforeTests(t *testing.T) {
	env := newSearchEnv(t)
	tree := map[string]string{
		"lib/plug/test.ex": `defmodule Plug.Test do
  @moduledoc """
  Conveniences for testing plugs: conn/3 builds a connection.
  """

  def conn(method, path, params_or_body \\ nil) do
    Plug.Adapters.Test.Conn.conn(%Plug.Conn{}, method, path, params_or_body)
  end
end
`,
	}
	for i, name := range []string{"test/plug/conn_test.exs", "test/plug/builder_test.exs", "test/plug/router_test.exs"} {
		tree[name] = fmt.Sprintf(`defmodule Plug.Test%dTest do
  use ExUnit.Case, async: true
  import Plug.Test

  test "build a test connection" do
    conn = conn(:get, "/")
    assert conn.method == "GET"
  end

  test "with a body" do
    test_conn = conn(:post, "/test", "body")
    assert test_conn.path_info == ["test"]
  end
end
`, i)
	}
	env.folder("plug", "default", tree)
	q := "build a test connection for unit tests"
	res := env.search(env.all, QueryRequest{Question: q})
	if len(res.Hits) == 0 || res.Hits[0].Path != "lib/plug/test.ex" {
		t.Errorf("%q: first hits %v, want lib/plug/test.ex first", q, firstPaths(res.Hits, 4))
	}
}

// A question that spells a name in three words ("get the current
// context") puts the definition of that name (get_current_context,
// GetCurrentContext) before a unit that holds more of its words.
func TestSpelledNameDefinition(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("click", "default", map[string]string{
		"click/globals.py": `from threading import local

_local = local()


def get_current_context(silent=False):
    """Returns the current click context."""
    return _local.stack[-1]


def push_context(ctx):
    """Pushes a new context to the current stack."""
    _local.__dict__.setdefault("stack", []).append(ctx)
`,
		"click/core.py": `def invoke(ctx, command):
    """Invoke the command inside the context of its parent, then
    run the command with the context of the parent inside it."""
    with ctx.scope():
        return command.callback(**ctx.params)
`,
	})
	env.folder("ctx", "default", map[string]string{
		"ctx/current.go": `package ctx

// GetCurrentContext returns the context the current command runs in.
func GetCurrentContext() *Context { return stack[len(stack)-1] }
`,
		"ctx/run.go": `package ctx

// Run gets the command's context, runs the command inside the context of
// its parent, then runs the command with the current context inside it.
func Run(c *Context, cmd Command) error { return cmd.Run(c.parent) }
`,
	})
	for _, tt := range []struct{ lang, title string }{
		{"python", "def get_current_context"},
		{"go", "func GetCurrentContext"},
	} {
		res := env.search(env.all, QueryRequest{Question: "get the current context from inside a command",
			Filters: &Filters{Languages: []string{tt.lang}}})
		if len(res.Hits) == 0 || res.Hits[0].Title != tt.title {
			got := pathTitles(res.Hits, 3)
			t.Errorf("%s: first hits %v, want %s first", tt.lang, got, tt.title)
		}
	}
}

// holdsExactName finds a name as written between characters that do not
// continue a name, ASCII or not.
func TestHoldsExactName(t *testing.T) {
	for _, tt := range []struct {
		title, name string
		want        bool
	}{
		{"func ReadByte", "ReadByte", true},
		{"func (b *Buffer) ReadByte", "ReadByte", true},
		{"func readByte", "ReadByte", false},
		{"func ReadBytes", "ReadByte", false},
		{"ReadByte…", "ReadByte", true},
		{"→ReadByte\u00a0(x)", "ReadByte", true},
		{"äReadByte", "ReadByte", false},
		{"ReadByte_2", "ReadByte", false},
		{"type Mutex struct, func Mutexes", "Mutex", true},
		{"", "Mutex", false},
	} {
		if got := holdsExactName(tt.title, tt.name); got != tt.want {
			t.Errorf("holdsExactName(%q, %q) = %v", tt.title, tt.name, got)
		}
	}
}
