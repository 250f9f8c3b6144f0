// Command ingestbench measures the ingest pipeline against a plain FTS5
// bulk insert of the same files. bench/ingest.sh runs it; see
// bench/README.md.
//
//	ingestbench -mode pipeline -dir CORPUS -workspace WS   first sync into a fresh workspace
//	ingestbench -mode resync   -dir CORPUS -workspace WS   sync again (nothing changed)
//	ingestbench -mode fts      -dir CORPUS -db FILE        raw text into a plain FTS5 table
//	ingestbench -mode fts-rows -workspace WS -db FILE      the rows WS indexed, into a table like its own
//
// Each prints one JSON object on stdout, with the peak RSS read from
// /proc/self/status (VmHWM).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	benchcorpus "github.com/tychora/tychora/bench/internal/corpus"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"

	_ "modernc.org/sqlite"
)

type result struct {
	Mode      string  `json:"mode"`
	Files     int64   `json:"files"`
	Bytes     int64   `json:"bytes"`
	Units     int64   `json:"units,omitempty"`
	Seconds   float64 `json:"seconds"`
	FilesPerS float64 `json:"files_per_s"`
	MBPerS    float64 `json:"mb_per_s"`
	PeakRSSKB int64   `json:"peak_rss_kb"`
	// OptimizeSeconds is the index merge a sync job runs after a large
	// sync (Indexer.Optimize), outside Seconds: the revision is
	// searchable before it starts.
	OptimizeSeconds float64 `json:"optimize_seconds,omitempty"`
}

func main() {
	mode := flag.String("mode", "pipeline", "pipeline, resync, rewrite or fts")
	dir := flag.String("dir", "", "the corpus directory")
	ws := flag.String("workspace", "", "workspace directory (pipeline, resync)")
	dbPath := flag.String("db", "", "database file (fts)")
	maxFile := flag.Int64("max-file-bytes", workspace.DefaultMaxFileBytes, "max_file_bytes")
	workers := flag.Int("workers", 0, "extraction goroutines (0: default)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *dir == "" && *mode != "fts-rows" {
		fail(errors.New("-dir is required"))
	}
	corpus, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	var r result
	switch *mode {
	case "pipeline", "resync", "rewrite":
		r, err = pipeline(ctx, *mode, corpus, *ws, *maxFile, *workers)
	case "fts":
		r, err = rawFTS(ctx, corpus, *dbPath, *maxFile)
	case "fts-rows":
		r, err = rawRows(ctx, *ws, *dbPath)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
	if r.Seconds > 0 {
		r.FilesPerS = float64(r.Files) / r.Seconds
		r.MBPerS = float64(r.Bytes) / (1 << 20) / r.Seconds
	}
	r.PeakRSSKB = peakRSS()
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ingestbench:", err)
	os.Exit(1)
}

func pipeline(ctx context.Context, mode, corpus, ws string, maxFile int64, workers int) (result, error) {
	if ws == "" {
		return result{}, errors.New("-workspace is required")
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return result{}, err
	}
	l := workspace.NewLayout(ws)
	if err := l.EnsureDirs(); err != nil {
		return result{}, err
	}
	db, err := workspace.OpenDB(ctx, l.DB)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	policy, err := sources.NewPolicy([]string{corpus}, ws)
	if err != nil {
		return result{}, err
	}
	ix := sources.NewIndexer(db, policy, sources.NewAssets(l.Assets),
		sources.Options{MaxFileBytes: maxFile, Workers: workers, TempDir: l.Runtime,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	src, _, err := ix.Add(ctx, sources.SourceInput{Path: corpus, Kind: sources.KindFolder})
	if err != nil {
		return result{}, err
	}
	if mode == "rewrite" {
		// Every file of the indexed corpus changes (a newline appended),
		// then the sync is timed: each old entry leaves the index and a new
		// one enters.
		if _, err := benchcorpus.Rewrite(corpus); err != nil {
			return result{}, err
		}
	}
	start := time.Now()
	st, err := ix.Sync(ctx, src.ID, sources.SyncOptions{})
	if err != nil {
		return result{}, err
	}
	secs := time.Since(start).Seconds()
	if mode == "resync" {
		return result{Mode: mode, Files: st.FilesSeen, Bytes: st.Bytes, Seconds: secs}, nil
	}
	if mode == "rewrite" {
		return result{Mode: mode, Files: st.Indexed, Bytes: st.Bytes, Units: st.Units, Seconds: secs}, nil
	}
	t0 := time.Now()
	if _, err := ix.Optimize(ctx); err != nil {
		return result{}, err
	}
	return result{Mode: mode, Files: st.Indexed, Bytes: st.Bytes, Units: st.Units, Seconds: secs,
		OptimizeSeconds: time.Since(t0).Seconds()}, nil
}

// rawFTS inserts every text file of the corpus (the files the pipeline
// indexes: no NUL byte in the first 8 KiB, valid UTF-8, at most
// max_file_bytes) into a plain FTS5 table in one transaction.
func rawFTS(ctx context.Context, corpus, dbPath string, maxFile int64) (result, error) {
	if dbPath == "" {
		return result{}, errors.New("-db is required")
	}
	var start time.Time
	tx, ins, done, err := bulkInsert(ctx, dbPath, []string{`CREATE VIRTUAL TABLE docs USING fts5(path, body)`},
		`INSERT INTO docs(path, body) VALUES (?, ?)`, &start)
	if err != nil {
		return result{}, err
	}
	defer done()
	var r result
	r.Mode = "fts"
	err = filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Size() > maxFile {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0 || !utf8.Valid(b) {
			return nil
		}
		rel, _ := filepath.Rel(corpus, p)
		if _, err := ins.ExecContext(ctx, filepath.ToSlash(rel), string(b)); err != nil {
			return err
		}
		r.Files++
		r.Bytes += int64(len(b))
		return nil
	})
	if err != nil {
		return result{}, err
	}
	if err := tx.Commit(); err != nil {
		return result{}, err
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// rawRows inserts the leaf units a pipeline run indexed in workspace ws —
// the same rows, the same five columns — into a fresh FTS5 table with the
// index's own options (contentless with deletes, the same tokenizer,
// 32 MiB of pending terms), in one transaction. The rows are read into
// memory first, outside the time: what is timed is FTS5 indexing exactly
// what the pipeline's index holds.
func rawRows(ctx context.Context, ws, dbPath string) (result, error) {
	if ws == "" || dbPath == "" {
		return result{}, errors.New("-workspace and -db are required")
	}
	src, err := sql.Open("sqlite", "file:"+workspace.NewLayout(ws).DB+"?mode=ro")
	if err != nil {
		return result{}, err
	}
	defer src.Close()
	type row struct {
		seq                                   int64
		title, heading, path, text, codeTerms string
	}
	var rows []row
	var r result
	r.Mode = "fts-rows"
	q, err := src.QueryContext(ctx, `SELECT seq, title, heading_path, path, text, code_terms FROM evidence_leaves`)
	if err != nil {
		return result{}, err
	}
	for q.Next() {
		var x row
		if err := q.Scan(&x.seq, &x.title, &x.heading, &x.path, &x.text, &x.codeTerms); err != nil {
			q.Close()
			return result{}, err
		}
		rows = append(rows, x)
		r.Bytes += int64(len(x.title) + len(x.heading) + len(x.path) + len(x.text) + len(x.codeTerms))
	}
	if err := q.Err(); err != nil {
		return result{}, err
	}
	q.Close()
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM files`).Scan(&r.Files); err != nil {
		return result{}, err
	}
	r.Units = int64(len(rows))

	var start time.Time
	tx, ins, done, err := bulkInsert(ctx, dbPath, []string{
		`CREATE VIRTUAL TABLE f USING fts5(title, heading_path, path, text, code_terms, content = '', contentless_delete = 1,
			tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'")`,
		`INSERT INTO f(f, rank) VALUES ('hashsize', 33554432)`,
	}, `INSERT INTO f(rowid, title, heading_path, path, text, code_terms) VALUES (?, ?, ?, ?, ?, ?)`, &start)
	if err != nil {
		return result{}, err
	}
	defer done()
	for _, x := range rows {
		if _, err := ins.ExecContext(ctx, x.seq, x.title, x.heading, x.path, x.text, x.codeTerms); err != nil {
			return result{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return result{}, err
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// bulkInsert creates the database at dbPath (WAL, synchronous NORMAL) with
// schema, sets *start, then begins the one transaction of a bulk insert
// and prepares insert in it. done closes it all (rolling back what was
// not committed).
func bulkInsert(ctx context.Context, dbPath string, schema []string, insert string, start *time.Time) (*sql.Tx, *sql.Stmt, func(), error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, nil, nil, err
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range schema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, nil, nil, err
		}
	}
	*start = time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	ins, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		tx.Rollback()
		db.Close()
		return nil, nil, nil, err
	}
	return tx, ins, func() { tx.Rollback(); db.Close() }, nil
}

// peakRSS reads VmHWM (kB) from /proc/self/status; 0 when unavailable.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
