package sources

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// writeVersion rewrites every file with the same length and a new marker,
// so a sync must re-read and re-extract all of them.
func writeVersion(e *env, n int, marker string) {
	for i := range n {
		e.write(fmt.Sprintf("d/f%03d.txt", i), fmt.Sprintf("marker %s file %03d\nfiller line\n", marker, i))
	}
}

// TestApplyAtomic flips many files between two versions while readers
// query the index: every read must see all files at one version. A writer
// that committed file by file would show a mix.
func TestApplyAtomic(t *testing.T) {
	const n = 60
	e := newEnv(t)
	writeVersion(e, n, "alpha")
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)

	ctx, stop := context.WithCancel(context.Background())
	var reads atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for range 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				// One statement reads one snapshot: FTS and evidence agree.
				var a, b, leaves, alphaText int
				err := e.db.R.QueryRowContext(ctx, `SELECT
					(SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH 'alpha'),
					(SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH 'bravo'),
					(SELECT count(*) FROM evidence WHERE source_id = ?1 AND leaf = 1),
					(SELECT count(*) FROM evidence WHERE source_id = ?1 AND leaf = 1 AND text LIKE 'marker alpha%')`, src.ID).
					Scan(&a, &b, &leaves, &alphaText)
				if err != nil {
					if ctx.Err() == nil {
						errc <- err
					}
					return
				}
				reads.Add(1)
				time.Sleep(200 * time.Microsecond) // leave the writer some CPU
				if leaves != n || !((a == n && b == 0 && alphaText == n) || (a == 0 && b == n && alphaText == 0)) {
					errc <- fmt.Errorf("mixed read: alpha %d bravo %d leaves %d alpha text %d", a, b, leaves, alphaText)
					return
				}
			}
		}()
	}
	markers := []string{"bravo", "alpha"}
	for i := range 4 {
		writeVersion(e, n, markers[i%2])
		st, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Indexed != n {
			t.Fatalf("flip %d: %+v", i, st)
		}
	}
	stop()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("reads %d", reads.Load())
	if reads.Load() < 4 {
		t.Fatalf("only %d reads overlapped the syncs", reads.Load())
	}
	e.checkFTS()
}

// TestCancelDuringSync cancels syncs at many points, the apply transaction
// included: each one either commits the new version whole or leaves the
// old one whole.
func TestCancelDuringSync(t *testing.T) {
	const n = 100
	e := newEnv(t)
	writeVersion(e, n, "alpha")
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	current := "alpha"
	for i, delay := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 8 * time.Millisecond,
		15 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond} {
		next := map[string]string{"alpha": "bravo", "bravo": "alpha"}[current]
		writeVersion(e, n, next)
		ctx, cancel := context.WithTimeout(context.Background(), delay)
		_, err := e.ix.Sync(ctx, src.ID, SyncOptions{})
		cancel()
		switch {
		case err == nil:
			current = next
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		default:
			t.Fatalf("cancel %d: %v", i, err)
		}
		if got := e.match(current); got != n {
			t.Fatalf("cancel %d (%v, err %v): %d files at %s, want %d", i, delay, err, got, current, n)
		}
		if other := map[string]string{"alpha": "bravo", "bravo": "alpha"}[current]; e.match(other) != 0 {
			t.Fatalf("cancel %d: a mix of versions", i)
		}
		e.checkFTS()
	}
}

// fillFields sets every field of the struct v points to, exported or
// not, to a value of its own (n counts them), so that a field the spool
// codec does not carry fails the round trip. A field of a type it does
// not know fails the test: the filler must learn it.
func fillFields(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	v = v.Elem()
	for i := range v.NumField() {
		f := reflect.NewAt(v.Field(i).Type(), unsafe.Pointer(v.Field(i).UnsafeAddr())).Elem()
		*n++
		switch name := v.Type().Field(i).Name; {
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("%s-%d-ü", name, *n))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.CanInt():
			f.SetInt(int64(-1000 * *n))
		case f.Type() == reflect.TypeFor[[]byte]():
			f.SetBytes([]byte(fmt.Sprintf("%s-%d", name, *n)))
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{name + "-a", fmt.Sprint(*n)}))
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			for k := range 2 {
				fillFields(t, f.Index(k).Addr(), n)
			}
		case f.Kind() == reflect.Struct:
			fillFields(t, f.Addr(), n)
		case f.Type() == reflect.TypeFor[error]():
			f.Set(reflect.ValueOf(errors.New(name)))
		default:
			t.Fatalf("fillFields: field %s of type %s: teach the filler its type", name, f.Type())
		}
	}
}

func TestSpoolRoundTrip(t *testing.T) {
	var full fileResult
	n := 0
	fillFields(t, reflect.ValueOf(&full), &n)
	// What is expected back: every field but those spoolOmitted names.
	want := full
	fields := reflect.ValueOf(&want).Elem()
	for _, name := range spoolOmitted {
		f := fields.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("spoolOmitted names %q, which fileResult lacks", name)
		}
		reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
	}
	full.err = nil // a failed result is refused, below
	rs := []fileResult{
		full,
		{rel: "a.md", existed: true, size: 12, mtimeNs: -5, sha: "abc", status: statusIndexed, kind: "markdown",
			language: "markdown", title: "A", facets: `{"x":"y"}`, extractor: "markdown", version: "1",
			terms: FileTerms([]LeafText{{Title: "ü", Text: "x x", CodeTerms: "a b"}}),
			units: []evRow{
				{id: "ev_1", level: LevelDocument, title: "A", heading: "[]", channel: ChannelText, sha: "s", tokens: 3},
				{id: "ev_2", parentID: "ev_1", ordinal: 1, level: LevelChunk, leaf: true, title: "ü", heading: `["A"]`,
					startLine: 1, endLine: 9, channel: ChannelText, sha: "t", text: strings.Repeat("x\n", 1000), codeTerms: "a b"},
			}},
		{rel: "b.bin", status: statusSkipped, reason: SkipBinary, size: 1 << 40},
		{rel: "c.png", status: statusAsset, assetID: "ff", mime: "image/png", units: []evRow{{id: "ev_3"}}},
	}
	expect := append([]fileResult{want}, rs[1:]...)
	failed := full
	failed.err = errors.New("read failed")
	if err := newSpool(t.TempDir(), 1<<20).write(&failed); err == nil {
		t.Fatal("the spool took a failed result")
	}
	for _, threshold := range []int{1, 1 << 20} {
		sp := newSpool(t.TempDir(), threshold)
		for i := range rs {
			if err := sp.write(&rs[i]); err != nil {
				t.Fatal(err)
			}
		}
		var got []fileResult
		if err := sp.each(func(r *fileResult) error { got = append(got, *r); return nil }); err != nil {
			t.Fatal(err)
		}
		sp.close()
		if !reflect.DeepEqual(got, expect) {
			t.Fatalf("threshold %d: round trip differs:\n%+v\n%+v", threshold, got, expect)
		}
	}
	// A truncated record is an error, not a panic.
	b := encodeResult(nil, &rs[0])
	for i := 0; i < len(b); i += 7 {
		if _, err := decodeResult(bufio.NewReader(bytes.NewReader(b[:i]))); err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
}
