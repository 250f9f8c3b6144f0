package sources

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
		// EachTerm reads the same list: a stem it reports in a whole list
		// of sorted stems is one LookupTerms finds, with the same counts.
		type stemCount struct {
			stem string
			c    TermCounts
		}
		var all []stemCount
		ok := EachTerm(b, func(s []byte, c TermCounts) bool {
			all = append(all, stemCount{string(s), c})
			return true
		})
		for i := 1; ok && i < len(all); i++ {
			ok = all[i-1].stem < all[i].stem
		}
		for i := 0; ok && i < len(all); i++ {
			var got *TermCounts
			LookupTerms(b, []string{all[i].stem}, func(_ int, c TermCounts) { got = &c })
			if got == nil || *got != all[i].c {
				t.Fatalf("stem %q: EachTerm %+v, LookupTerms %v", all[i].stem, all[i].c, got)
			}
		}
	})
}

// An index built before file terms were kept (migration 0012 not applied)
// opens with no terms on its files, and the next sync reads them again.
func TestFileTermsMigration(t *testing.T) {
	e := newEnv(t)
	e.write("proj/a.go", "package a\n\nfunc Read() {}\n")
	e.write("proj/docs/guide.md", "# Guide\n\nRead me.\n")
	src := e.add(SourceInput{Path: "proj"})
	e.sync(src.ID)
	if n := e.count(`SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM file_terms t WHERE t.source_id = f.source_id AND t.path = f.path)`); n != 0 {
		t.Fatalf("%d indexed files have no terms", n)
	}
	e.rewind(t, append(append([]string(nil), undoVisionMigration...),
		`ALTER TABLE files DROP COLUMN terms`, `DROP TRIGGER IF EXISTS file_fts_delete`, `DROP TABLE IF EXISTS file_fts`,
		`DELETE FROM schema_migrations WHERE version >= 12`)...)
	if n := e.count(`SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM file_terms t WHERE t.source_id = f.source_id AND t.path = f.path)`); n != 2 {
		t.Fatalf("after the migration %d files have no terms, want 2", n)
	}
	e.sync(src.ID)
	if n := e.ix.ExtractCalls(); n != 2 {
		t.Errorf("the sync after the migration extracted %d files, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM file_terms t WHERE t.source_id = f.source_id AND t.path = f.path)`); n != 0 {
		t.Errorf("after the sync %d files have no terms", n)
	}
}

// Migration 0016 moves the counts out of files.terms into file_terms
// whole: nothing is extracted again, and a file that goes takes its
// counts with it.
func TestFileTermsTable(t *testing.T) {
	e := newEnv(t)
	e.write("proj/a.go", "package a\n\nfunc Read() {}\n")
	e.write("proj/docs/guide.md", "# Guide\n\nRead me.\n")
	e.write("proj/logo.png", string(tinyPNG))
	src := e.add(SourceInput{Path: "proj"})
	e.sync(src.ID)
	const kept = `SELECT count(*) FROM file_terms`
	files := e.count(kept)
	if files < 2 {
		t.Fatalf("%d files have kept counts, want the code and the guide at least", files)
	}
	before := e.count(`SELECT sum(length(terms)) FROM file_terms`)
	e.rewind(t) // back to 0015: the counts in files.terms
	if n := e.count(`SELECT count(*) FROM pragma_table_info('files') WHERE name = 'terms'`); n != 0 {
		t.Fatal("after the migration files still has its terms column")
	}
	if n, m := e.count(kept), e.count(`SELECT sum(length(terms)) FROM file_terms`); n != files || m != before {
		t.Fatalf("after the migration %d files have %d bytes of counts, want %d and %d", n, m, files, before)
	}
	e.sync(src.ID)
	if n := e.ix.ExtractCalls(); n != 0 {
		t.Errorf("the sync after the migration extracted %d files, want 0", n)
	}
	if err := os.Remove(filepath.Join(e.root, "proj", "a.go")); err != nil {
		t.Fatal(err)
	}
	e.sync(src.ID)
	if n := e.count(kept + ` WHERE path = 'a.go'`); n != 0 {
		t.Errorf("a deleted file keeps %d rows of counts", n)
	}
	if n := e.count(kept); n != files-1 {
		t.Errorf("%d files have kept counts, want %d", n, files-1)
	}
}

// occurrenceTerms counts as FileTerms does, stemming every occurrence of
// every token where FileTerms stems each distinct token once.
func occurrenceTerms(leaves []LeafText) []byte {
	counts := map[string]*TermCounts{}
	add := func(tok []byte, field int) {
		st := string(PorterStem(append([]byte(nil), tok...)))
		c := counts[st]
		if c == nil {
			c = &TermCounts{}
			counts[st] = c
		}
		switch field {
		case 0:
			c.Title++
		case 1:
			c.Text++
		default:
			c.Code++
		}
	}
	for _, l := range leaves {
		title := clipScan(l.Title)
		var whole [][2]int
		ForEachToken(title, nil, func(tok []byte, a, b int) bool {
			add(tok, 0)
			whole = append(whole, [2]int{a, b})
			return true
		})
		EachPart(title, func(_ bool, a, b int) {
			if !slices.Contains(whole, [2]int{a, b}) {
				if part := appendLowerASCII(nil, title[a:b]); len(part) > 0 {
					add(part, 0)
				}
			}
		})
		for field, s := range []string{l.Text, l.CodeTerms} {
			ForEachToken(clipScan(s), nil, func(tok []byte, _, _ int) bool {
				add(tok, field+1)
				return true
			})
		}
	}
	return encodeTermCounts(counts)
}

// FileTerms gives the counts of stemming every occurrence, over this
// package's own files and text outside ASCII.
func TestFileTermsStemsOnceAsEveryOccurrence(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("glob: %v (%d files)", err, len(names))
	}
	var all []LeafText
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		leaf := LeafText{Title: "func " + name + " HTTPServerName", Text: text, CodeTerms: CodeTerms(text)}
		all = append(all, leaf)
		if got, want := FileTerms([]LeafText{leaf}), occurrenceTerms([]LeafText{leaf}); !slices.Equal(got, want) {
			t.Errorf("%s: counts differ from stemming every occurrence", name)
		}
	}
	all = append(all, LeafText{Title: "Ünïcode Café", Text: "naïve cafés, CAFÉ; Ärger ärgerlich", CodeTerms: "ärger"})
	if got, want := FileTerms(all), occurrenceTerms(all); !slices.Equal(got, want) {
		t.Error("counts of all the files differ from stemming every occurrence")
	}
}

// BenchmarkFileTerms counts the terms of this package's own files, each
// one leaf with its code terms.
func BenchmarkFileTerms(b *testing.B) {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		b.Fatalf("glob: %v (%d files)", err, len(names))
	}
	var leaves []LeafText
	var size int64
	for _, name := range names {
		text, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		leaves = append(leaves, LeafText{Title: name, Text: string(text), CodeTerms: CodeTerms(string(text))})
		size += int64(len(text))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, l := range leaves {
			FileTerms([]LeafText{l})
		}
	}
}
