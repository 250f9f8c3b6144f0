package sources

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tychora/tychora/workspace"
)

func TestFileTermsCounts(t *testing.T) {
	b := FileTerms([]LeafText{
		{Title: "func ParseHTTPRequest", Text: "parses the request; parsing requests", CodeTerms: "parse http request"},
		{Title: "", Text: "Ünïcode café", CodeTerms: ""},
	})
	got := map[string]TermCounts{}
	want := []string{"caf", "cafe", "func", "http", "pars", "parse", "parsehttprequest", "request", "unicod", "unicode", "zzz"}
	slices.Sort(want)
	if !LookupTerms(b, want, func(i int, c TermCounts) { got[want[i]] = c }) {
		t.Fatal("LookupTerms refused what FileTerms wrote")
	}
	for stem, c := range map[string]TermCounts{
		"func":             {Title: 1},
		"parsehttprequest": {Title: 1},
		// "parse" and "parses" and "parsing" stem to "pars".
		"pars":    {Title: 1, Text: 2, Code: 1},
		"http":    {Title: 1, Code: 1},
		"request": {Title: 1, Text: 2, Code: 1},
		"unicod":  {Text: 1},
		"cafe":    {Text: 1},
	} {
		if got[stem] != c {
			t.Errorf("%q: %+v, want %+v", stem, got[stem], c)
		}
	}
	if _, ok := got["zzz"]; ok {
		t.Error("a stem the file lacks was reported")
	}
	if LookupTerms(nil, want, func(int, TermCounts) {}) || LookupTerms([]byte{9, 1}, want, func(int, TermCounts) {}) {
		t.Error("LookupTerms read what is no count list")
	}
	if LookupTerms(b[:len(b)-2], want, func(int, TermCounts) {}) {
		t.Error("LookupTerms read a cut list to its end")
	}
}

func FuzzLookupTerms(f *testing.F) {
	f.Add(FileTerms([]LeafText{{Title: "func Read", Text: "read the file", CodeTerms: "read"}}), "read")
	f.Add([]byte{1, 200}, "a")
	f.Fuzz(func(t *testing.T, b []byte, stem string) {
		n := 0
		LookupTerms(b, []string{"", stem}, func(i int, c TermCounts) {
			if i < 0 || i > 1 {
				t.Fatalf("index %d", i)
			}
			n++
		})
		if n > 2 {
			t.Fatalf("%d stems reported for 2 wanted", n)
		}
	})
}

// An index built before file terms were kept (migration 0010 not applied)
// opens with no terms on its files, and the next sync reads them again.
func TestFileTermsMigration(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.write("proj/a.go", "package a\n\nfunc Read() {}\n")
	e.write("proj/docs/guide.md", "# Guide\n\nRead me.\n")
	src := e.add(SourceInput{Path: "proj"})
	e.sync(src.ID)
	if n := e.count(`SELECT count(*) FROM files WHERE terms IS NULL`); n != 0 {
		t.Fatalf("%d indexed files have no terms", n)
	}
	for _, q := range []string{`ALTER TABLE files DROP COLUMN terms`, `DELETE FROM schema_migrations WHERE version >= 10`} {
		if _, err := e.db.W.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	path := filepath.Join(e.ws, "index.db")
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := workspace.OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	t.Cleanup(func() { db.Close() })
	e.ix = NewIndexer(db, e.policy, e.assets, Options{Workers: 2, TempDir: t.TempDir()})
	if n := e.count(`SELECT count(*) FROM files WHERE terms IS NULL`); n != 2 {
		t.Fatalf("after the migration %d files have no terms, want 2", n)
	}
	e.sync(src.ID)
	if n := e.ix.ExtractCalls(); n != 2 {
		t.Errorf("the sync after the migration extracted %d files, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM files WHERE terms IS NULL`); n != 0 {
		t.Errorf("after the sync %d files have no terms", n)
	}
}
