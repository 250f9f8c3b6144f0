package sources

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// keepFiles are the files of TestKeepUnchangedUnits: Go code (a unit a
// declaration) and Markdown (sections over chunks: units that are no
// leaf), each with n declarations or sections.
func keepFiles(r *rand.Rand, n int) map[string][]string {
	out := map[string][]string{}
	for f := range 4 {
		var decls []string
		for i := range n {
			decls = append(decls, fmt.Sprintf("// F%d%d does w%d.\nfunc F%d%d(x int) int {\n\treturn x + %d // v%d\n}\n",
				f, i, r.IntN(50), f, i, i, r.IntN(50)))
		}
		out[fmt.Sprintf("pkg/f%d.go", f)] = decls
	}
	for f := range 3 {
		var secs []string
		for i := range n {
			secs = append(secs, fmt.Sprintf("## Section %d %d\n\nwords w%d and w%d.\n\n### Sub %d\n\nmore m%d.\n",
				f, i, r.IntN(50), r.IntN(50), i, r.IntN(50)))
		}
		out[fmt.Sprintf("doc/d%d.md", f)] = secs
	}
	return out
}

func writeKeepFiles(e *env, files map[string][]string) {
	for rel, parts := range files {
		head := "package pkg\n\n"
		if strings.HasSuffix(rel, ".md") {
			head = "# Title of " + rel + "\n\nIntro.\n\n"
		}
		e.write(rel, head+strings.Join(parts, "\n"))
	}
}

// editKeepFiles changes files as an editor or a checkout would: a line
// appended, the last part edited, removed or one added, one in the middle
// edited, lines added at the top, and a file rewritten.
func editKeepFiles(r *rand.Rand, files map[string][]string) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		parts := files[p]
		switch r.IntN(8) {
		case 0: // a line appended
			parts[len(parts)-1] += fmt.Sprintf("\n// zq%d\n", r.IntN(1000))
		case 1: // the last part edited
			parts[len(parts)-1] = strings.Replace(parts[len(parts)-1], "w", "zw", 1)
		case 2: // the last part removed
			if len(parts) > 1 {
				parts = parts[:len(parts)-1]
			}
		case 3: // a part added at the end
			parts = append(parts, strings.ReplaceAll(parts[0], "0", "9")+fmt.Sprintf("\n// added %d\n", r.IntN(1000)))
		case 4: // one in the middle edited
			i := r.IntN(len(parts))
			parts[i] = strings.Replace(parts[i], "w", "mid", 1)
		case 5: // lines at the top: every line moves
			parts[0] = "\n\n" + parts[0]
		case 6: // removed in the middle
			if len(parts) > 2 {
				i := r.IntN(len(parts) - 1)
				parts = append(parts[:i], parts[i+1:]...)
			}
		case 7: // unchanged
		}
		files[p] = parts
	}
}

// unitRows lists every unit of the index as text, by path and ordinal,
// with all its columns but the seq and the revision's own ids (whether
// they are its file's); its id and its parent's when ids is
// set (they are made from the source's id), else its parent's ordinal.
func unitRows(e *env, ids bool) []string {
	e.t.Helper()
	id := `'', (SELECT p.ordinal FROM evidence p WHERE p.evidence_id = e.parent_id)`
	if ids {
		id = `e.evidence_id, coalesce(e.parent_id, '')`
	}
	rows, err := e.db.R.Query(`SELECT e.path, e.ordinal, ` + id + `, e.level, e.leaf, e.kind,
		e.language, e.role, e.title, e.heading_path, e.start_line, e.end_line, e.channel, e.sha256, e.text, e.code_terms, e.tokens,
		e.revision_id = f.revision_id, x.revision_id = f.revision_id, e.extraction_id = f.extraction_id
		FROM evidence e JOIN files f ON f.source_id = e.source_id AND f.path = e.path JOIN extractions x ON x.id = e.extraction_id
		ORDER BY e.path, e.ordinal`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		v := make([]any, 21)
		p := make([]any, len(v))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", v))
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// indexAnswers lists, for each word, the units the lexical index finds
// for it.
func indexAnswers(e *env, words []string) []string {
	e.t.Helper()
	var out []string
	for _, w := range words {
		rows, err := e.db.R.Query(`SELECT e.path || '#' || e.ordinal FROM evidence_fts f JOIN evidence e ON e.seq = f.rowid
			WHERE evidence_fts MATCH ? ORDER BY 1`, w)
		if err != nil {
			e.t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, w+" unit "+s)
		}
		rows.Close()
	}
	return out
}

// checkSeqRanges checks what best-file completion relies on: a file's
// units are in ordinal order in a range of seqs that holds no other
// file's unit.
func checkSeqRanges(e *env) {
	e.t.Helper()
	if n := e.count(`SELECT count(*) FROM evidence a JOIN evidence b ON b.source_id = a.source_id AND b.path = a.path
		AND b.ordinal > a.ordinal AND b.seq < a.seq`); n != 0 {
		e.t.Fatalf("%d pairs of units out of ordinal order", n)
	}
	if n := e.count(`WITH r AS (SELECT source_id, path, min(seq) lo, max(seq) hi FROM evidence GROUP BY source_id, path)
		SELECT count(*) FROM r JOIN evidence o ON o.seq BETWEEN r.lo AND r.hi AND (o.source_id != r.source_id OR o.path != r.path)`); n != 0 {
		e.t.Fatalf("%d units inside another file's range of seqs", n)
	}
}

// TestKeepUnchangedUnits edits files in every way that keeps some of
// their units, or cannot, syncs, and compares the index with a fresh
// sync of the same files: the same units with the same columns, each
// lexical index finding the same units and files with the same scores;
// and checks that files did keep rows (their document's seq stayed).
func TestKeepUnchangedUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	files := keepFiles(r, 6)
	e := newEnv(t)
	writeKeepFiles(e, files)
	src := e.add(SourceInput{Path: e.root})
	e.sync(src.ID)
	var words []string
	for i := range 50 {
		words = append(words, fmt.Sprintf("w%d", i), fmt.Sprintf("m%d", i), fmt.Sprintf("v%d", i))
	}
	words = append(words, "zw*", "mid*", "zq*", "added", "section", "return", "title")
	kept := 0
	for round := range 12 {
		docs := map[string]int{}
		for _, p := range e.paths(src.ID) {
			docs[p] = e.count(`SELECT seq FROM evidence WHERE path = ? AND ordinal = 0`, p)
		}
		editKeepFiles(r, files)
		// A new mtime for every file, even one written within the
		// filesystem's time granularity.
		writeKeepFiles(e, files)
		for rel := range files {
			p := filepath.Join(e.root, filepath.FromSlash(rel))
			mt := time.Unix(1_700_000_000+int64(round)*10, 0)
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
		}
		e.sync(src.ID)
		checkSeqRanges(e)
		for p, seq := range docs {
			if e.count(`SELECT seq FROM evidence WHERE path = ? AND ordinal = 0`, p) == seq {
				kept++
			}
		}

		fresh := newEnv(t)
		writeKeepFiles(fresh, files)
		fsrc := fresh.add(SourceInput{Path: fresh.root})
		fresh.sync(fsrc.ID)
		sameLists(t, fmt.Sprintf("round %d: units", round), unitRows(e, false), unitRows(fresh, false))
		sameLists(t, fmt.Sprintf("round %d: answers", round), indexAnswers(e, words), indexAnswers(fresh, words))
		if round%4 == 3 {
			// The ids too: a forced sync extracts every file again and
			// keeps nothing.
			before := unitRows(e, true)
			if _, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
			sameLists(t, fmt.Sprintf("round %d: units and ids", round), before, unitRows(e, true))
		}
	}
	if kept < 12*3 {
		t.Fatalf("files kept their document %d times in 12 rounds of 7 files, want more", kept)
	}
}

func sameLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: %d:\n got %s\nwant %s", what, i, got[i], want[i])
		}
	}
	t.Fatalf("%s: %d, want %d", what, len(got), len(want))
}

// TestKeepStatementsUseSeqRanges checks the plans of the statements that
// remove and index a kept file's changed units: each reads its ranges of
// seqs, never an index over the whole source or over all leaves (an
// automatic index over leaf made one sync of 1,000 files take a minute).
func TestKeepStatementsUseSeqRanges(t *testing.T) {
	e := newEnv(t)
	e.write("a.go", "package a\n\nfunc A() {}\n")
	src := e.add(SourceInput{Path: e.root})
	e.sync(src.ID)
	if _, err := e.db.W.Exec(sqlKeepCreate); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{sqlKeepDrop, sqlKeepIndexLeaves, sqlKeepRange} {
		args := make([]any, strings.Count(q, "?"))
		if strings.Contains(q, "?1") {
			args = args[:1]
		}
		rows, err := e.db.W.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		if strings.Contains(all, "AUTOMATIC") || strings.Contains(all, "evidence_file (source_id=?)") ||
			(strings.Contains(q, "evidence") && !strings.Contains(all, "INTEGER PRIMARY KEY")) {
			t.Errorf("%s\nplan: %s", q, all)
		}
	}
}
