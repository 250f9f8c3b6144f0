package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// submit records a submission for the selection as job jobID, as the
// service does after its checks.
func (e *env) submit(jobID string, sel Selection, in SourceInput) {
	e.t.Helper()
	ctx := context.Background()
	tx, err := e.db.W.BeginTx(ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := RecordSelectionRequest(ctx, tx, jobID, "tok_test", sel, in); err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) selection(sourceID, rel string) Selection {
	e.t.Helper()
	sel, err := GetSelection(context.Background(), e.db.R, SelectionID(sourceID, rel))
	if err != nil {
		e.t.Fatalf("selection of %s: %v", rel, err)
	}
	return sel
}

// fileTerms counts the files whose kept term counts (file_terms) hold
// the word w.
func (e *env) fileTerms(w string) int {
	e.t.Helper()
	stem := string(PorterStem([]byte(w)))
	rows, err := e.db.R.Query(`SELECT terms FROM file_terms`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			e.t.Fatal(err)
		}
		LookupTerms(b, []string{stem}, func(int, TermCounts) { n++ })
	}
	return n
}

// TestSelectionText: a submission becomes one vision unit of the image's
// file, indexed (units and the file's counts), related to the image's evidence;
// a second one replaces it; it is checked again when applied (CONFLICT,
// NOT_FOUND); it leaves with the image when the image changes, is
// deleted, or its source is removed.
func TestSelectionText(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.write("shots/dialog.png", string(tinyPNG))
	e.write("shots/notes.md", "# Notes\n\nNothing here.\n")
	src := e.add(SourceInput{Path: "shots"})
	e.sync(src.ID)
	sel := e.selection(src.ID, "dialog.png")
	if sel.Selector != SelectorAsset || sel.AssetID == "" || sel.EvidenceID == "" || sel.SHA256 != sel.AssetID {
		t.Fatalf("selection %+v", sel)
	}
	in := SourceInput{SelectionID: sel.ID, SHA256: sel.SHA256, Text: "Disk quota exceeded on volume zephyrine\r\nRetry?", Model: "eye-1"}
	if err := ValidateSelection(in); err != nil {
		t.Fatal(err)
	}
	if err := CheckSelection(ctx, e.db.R, sel, in); err != nil {
		t.Fatal(err)
	}
	e.submit("job-1", sel, in)
	out, ok, err := e.ix.ApplySelectionText(ctx, "job-1")
	if err != nil || !ok || out.EvidenceID == "" {
		t.Fatalf("apply: %+v %v %v", out, ok, err)
	}
	e.checkFTS()
	if n := e.match("zephyrine"); n != 1 {
		t.Fatalf("%d units match the text, want 1", n)
	}
	if n := e.fileTerms("zephyrine"); n != 1 {
		t.Fatalf("%d files count the text's words, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM evidence WHERE evidence_id = ? AND kind = 'vision' AND path = 'dialog.png'
		AND text = 'Disk quota exceeded on volume zephyrine' || char(10) || 'Retry?' AND heading_path LIKE '%tychora://assets/' || ? || '%'`,
		out.EvidenceID, sel.AssetID); n != 1 {
		t.Fatal("the vision unit is not as recorded")
	}
	if n := e.count(`SELECT count(*) FROM relations WHERE from_id = ? AND type = 'describes' AND to_id = ? AND target = ?`,
		out.EvidenceID, sel.EvidenceID, sel.ID); n != 1 {
		t.Fatal("no describes relation to the image's evidence")
	}
	if n := e.count(`SELECT units FROM files WHERE source_id = ? AND path = 'dialog.png'`, src.ID); n != 2 {
		t.Fatalf("the image's file has %d units, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM vision_texts WHERE selection_id = ? AND model = 'eye-1' AND principal = 'tok_test'`, sel.ID); n != 1 {
		t.Fatal("the submission's model and principal are not recorded")
	}
	if n := e.count(`SELECT count(*) FROM vision_requests`); n != 0 {
		t.Fatalf("%d requests are left after the apply", n)
	}
	// Not a submission: the job is a sync.
	if _, ok, err := e.ix.ApplySelectionText(ctx, "job-none"); ok || err != nil {
		t.Fatalf("a job without a submission: %v %v", ok, err)
	}

	// Submitting again replaces the text.
	in.Text = "A dialog about the quokka"
	e.submit("job-2", sel, in)
	if _, _, err := e.ix.ApplySelectionText(ctx, "job-2"); err != nil {
		t.Fatal(err)
	}
	e.checkFTS()
	if e.match("zephyrine") != 0 || e.fileTerms("zephyrine") != 0 || e.match("quokka") != 1 || e.fileTerms("quokka") != 1 {
		t.Fatal("the second text did not replace the first")
	}
	if n := e.count(`SELECT count(*) FROM evidence WHERE kind = 'vision'`); n != 1 {
		t.Fatalf("%d vision units, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM relations WHERE type = 'describes'`); n != 1 {
		t.Fatalf("%d describes relations, want 1", n)
	}

	// A sync of an unchanged image keeps the text.
	e.write("shots/notes.md", "# Notes\n\nSomething now.\n")
	e.sync(src.ID)
	if e.match("quokka") != 1 {
		t.Fatal("a sync that did not change the image dropped its text")
	}

	// The image changes before a queued submission runs: CONFLICT, and
	// the text seen in the old image leaves with it.
	in.Text = "the marmot"
	e.submit("job-3", sel, in)
	e.write("shots/dialog.png", string(tinyPNG)+"changed")
	e.sync(src.ID)
	_, ok, err = e.ix.ApplySelectionText(ctx, "job-3")
	if !ok || workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Fatalf("apply after the image changed: %v %v, want CONFLICT", ok, err)
	}
	if e.match("quokka") != 0 || e.match("marmot") != 0 || e.count(`SELECT count(*) FROM vision_texts`) != 0 {
		t.Fatal("text seen in the old image is still indexed")
	}
	now := e.selection(src.ID, "dialog.png")
	if now.ID != sel.ID || now.SHA256 == sel.SHA256 {
		t.Fatalf("the selection after the change: %+v (was %+v)", now, sel)
	}
	if err := CheckSelection(ctx, e.db.R, now, in); workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Fatalf("check with the old hash: %v, want CONFLICT", err)
	}

	// The image is deleted: a submission for it is NOT_FOUND.
	in.SHA256 = now.SHA256
	e.submit("job-4", now, in)
	if _, _, err := e.ix.ApplySelectionText(ctx, "job-4"); err != nil {
		t.Fatal(err)
	}
	if e.match("marmot") != 1 {
		t.Fatal("the text for the new image is not indexed")
	}
	e.submit("job-5", now, in)
	if err := os.Remove(filepath.Join(e.root, "shots", "dialog.png")); err != nil {
		t.Fatal(err)
	}
	e.sync(src.ID)
	if e.match("marmot") != 0 {
		t.Fatal("text seen in a deleted image is still indexed")
	}
	if _, _, err := e.ix.ApplySelectionText(ctx, "job-5"); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("apply after the image was deleted: %v, want NOT_FOUND", err)
	}

	// The source is removed: its texts and pending requests leave with it.
	e.write("shots/dialog.png", string(tinyPNG))
	e.sync(src.ID)
	sel = e.selection(src.ID, "dialog.png")
	in.SHA256 = sel.SHA256
	e.submit("job-6", sel, in)
	if _, _, err := e.ix.ApplySelectionText(ctx, "job-6"); err != nil {
		t.Fatal(err)
	}
	e.submit("job-7", sel, in)
	if err := RemoveSource(ctx, e.db, src.ID); err != nil {
		t.Fatal(err)
	}
	if e.count(`SELECT count(*) FROM vision_texts`)+e.count(`SELECT count(*) FROM vision_requests`)+e.count(`SELECT count(*) FROM evidence WHERE kind = 'vision'`) != 0 {
		t.Fatal("the removed source's texts are left")
	}
	if _, ok, err := e.ix.ApplySelectionText(ctx, "job-7"); ok || err != nil {
		t.Fatalf("a request of a removed source: %v %v", ok, err)
	}
}

func TestValidateSelection(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	ok := SourceInput{SelectionID: "sel_1", SHA256: sha, Text: "seen"}
	yes := false
	cases := []struct {
		name string
		edit func(*SourceInput)
	}{
		{"a path", func(in *SourceInput) { in.Path = "docs" }},
		{"a kind", func(in *SourceInput) { in.Kind = KindFolder }},
		{"globs", func(in *SourceInput) { in.Include = []string{"*.md"} }},
		{"watch", func(in *SourceInput) { in.Watch = &yes }},
		{"no selection id", func(in *SourceInput) { in.SelectionID = "" }},
		{"no hash", func(in *SourceInput) { in.SHA256 = "" }},
		{"upper-case hash", func(in *SourceInput) { in.SHA256 = strings.ToUpper(sha) }},
		{"short hash", func(in *SourceInput) { in.SHA256 = sha[:63] }},
		{"no text", func(in *SourceInput) { in.Text = "" }},
		{"blank text", func(in *SourceInput) { in.Text = " \n\t" }},
		{"text too long", func(in *SourceInput) { in.Text = strings.Repeat("x", MaxSelectionTextBytes+1) }},
		{"text not UTF-8", func(in *SourceInput) { in.Text = "a\xffb" }},
		{"text with NUL", func(in *SourceInput) { in.Text = "a\x00b" }},
		{"model of two lines", func(in *SourceInput) { in.Model = "a\nb" }},
		{"model too long", func(in *SourceInput) { in.Model = strings.Repeat("m", MaxModelBytes+1) }},
		{"bad collection", func(in *SourceInput) { in.CollectionID = "no/such" }},
	}
	if err := ValidateSelection(ok); err != nil {
		t.Fatal(err)
	}
	long := ok
	long.Text = strings.Repeat("x", MaxSelectionTextBytes)
	if err := ValidateSelection(long); err != nil {
		t.Fatalf("text at the limit: %v", err)
	}
	for _, tc := range cases {
		in := ok
		tc.edit(&in)
		if err := ValidateSelection(in); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", tc.name, err)
		}
	}
	// The path form refuses the selection form's fields.
	if err := validateInput(SourceInput{Path: "docs", Text: "x"}); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
		t.Errorf("a path with text: %v", err)
	}
}
