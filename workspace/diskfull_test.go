package workspace

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sqliteFull returns a real SQLITE_FULL: a database capped at a few pages
// that an insert outgrows.
func sqliteFull(t *testing.T) error {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (b BLOB); PRAGMA max_page_count = 8`); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO t VALUES (zeroblob(1 << 20))`)
	if err == nil {
		t.Fatal("an insert past max_page_count succeeded")
	}
	return fmt.Errorf("apply revision: %w", err)
}

// TestDiskFullIsUnavailable: a write that found the disk full is
// UNAVAILABLE with a plain message, never INTERNAL with SQLite's or the
// file system's words; other errors keep their codes.
func TestDiskFullIsUnavailable(t *testing.T) {
	enospc := fmt.Errorf("store asset: %w", &fs.PathError{Op: "write", Path: "/secret/assets/ab/.tmp-1", Err: syscall.ENOSPC})
	full := sqliteFull(t)
	cases := []struct {
		name string
		err  error
		code Code
		full bool
	}{
		{"SQLITE_FULL", full, CodeUnavailable, true},
		{"ENOSPC", enospc, CodeUnavailable, true},
		{"EDQUOT", &fs.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, CodeUnavailable, true},
		{"internal around a full disk", Wrap(CodeInternal, full, "internal error"), CodeUnavailable, true},
		{"a code of its own around a full disk", Wrap(CodeConflict, enospc, "another sync finished first"), CodeConflict, false},
		{"other I/O error", &fs.PathError{Op: "write", Path: "x", Err: syscall.EIO}, CodeInternal, false},
		{"plain error", errors.New("boom"), CodeInternal, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Public(tc.err)
			if p.Code != tc.code {
				t.Fatalf("code %s, want %s (%v)", p.Code, tc.code, tc.err)
			}
			if said := strings.Contains(p.Message, "disk is full"); said != tc.full {
				t.Errorf("message %q", p.Message)
			}
			for _, leak := range []string{"SQL", "sqlite", "(13)", "/secret", "no space left", "max_page"} {
				if strings.Contains(p.Message, leak) {
					t.Errorf("message %q shows %q", p.Message, leak)
				}
			}
		})
	}
	if !IsDiskFull(full) || IsDiskFull(nil) || IsDiskFull(errors.New("disk full")) {
		t.Error("IsDiskFull")
	}
}
