// Command dbcheck checks a tychora index for the fault tests of
// cmd/tychora: PRAGMA integrity_check, FTS5's own integrity-check against
// its content, the evidence set (path, level, span, sha256: ids are per
// workspace) and every job's state, printed as one JSON object.
//
// It opens the database read-write, so give it a copy when the original
// must stay as it is: SQLite then recovers the copy's WAL as the next
// owner would. It is its own process because SQLite under the race
// detector, which the tests run with, is tens of times slower.
package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	_ "modernc.org/sqlite"
)

type report struct {
	Integrity string            `json:"integrity"`
	FTS       string            `json:"fts"`
	Evidence  int               `json:"evidence"`
	Digest    string            `json:"digest"`
	Lines     []string          `json:"lines,omitempty"`
	Jobs      map[string]string `json:"jobs"`
	Resumes   int               `json:"resumes"`
}

func main() {
	lines := flag.Bool("lines", false, "print every evidence line, not only their count and digest")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: dbcheck [-lines] INDEX.DB")
		os.Exit(2)
	}
	r, err := check(flag.Arg(0), *lines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbcheck:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

func check(path string, withLines bool) (report, error) {
	var r report
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return r, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		return r, fmt.Errorf("integrity_check: %w", err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return r, err
		}
		problems = append(problems, s)
	}
	rows.Close()
	r.Integrity = strings.Join(problems, "; ")
	// FTS5 checks its index against the content table (rank 1).
	r.FTS = "ok"
	if _, err := db.Exec(`INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		r.FTS = err.Error()
	}
	rows, err = db.Query(`SELECT path, level, start_line, end_line, sha256 FROM evidence`)
	if err != nil {
		return r, fmt.Errorf("evidence: %w", err)
	}
	var ev []string
	for rows.Next() {
		var p, level, sha string
		var a, b int
		if err := rows.Scan(&p, &level, &a, &b, &sha); err != nil {
			return r, err
		}
		ev = append(ev, fmt.Sprintf("%s|%s|%d|%d|%s", p, level, a, b, sha))
	}
	rows.Close()
	slices.Sort(ev)
	h := sha256.Sum256([]byte(strings.Join(ev, "\n")))
	r.Evidence, r.Digest = len(ev), hex.EncodeToString(h[:])
	if withLines {
		r.Lines = ev
	}
	r.Jobs = map[string]string{}
	rows, err = db.Query(`SELECT id, state, resumes FROM jobs`)
	if err != nil {
		return r, fmt.Errorf("jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, state string
		var n int
		if err := rows.Scan(&id, &state, &n); err != nil {
			return r, err
		}
		r.Jobs[id] = state
		r.Resumes += n
	}
	return r, rows.Err()
}
