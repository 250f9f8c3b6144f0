package workspace

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sqliteReadOnly returns a real SQLITE_READONLY: a write through a
// connection opened read-only.
func sqliteReadOnly(t *testing.T, dir string) error {
	t.Helper()
	path := filepath.Join(dir, "ro.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec(`INSERT INTO t VALUES (1)`)
	if err == nil {
		t.Fatal("a write through a read-only connection succeeded")
	}
	return fmt.Errorf("open index: %w", err)
}

// sqliteCantOpen returns a real SQLITE_CANTOPEN: a database whose
// directory does not exist.
func sqliteCantOpen(t *testing.T, path string) error {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Ping()
	if err == nil {
		t.Fatalf("opened %s", path)
	}
	return fmt.Errorf("open index: %w", err)
}

// TestStorageError: a full disk, a read-only file system, a refused
// permission and a path through a file are typed errors in plain words
// naming the workspace, told apart by errno and SQLite result code; what
// is not one of them is left as it is.
func TestStorageError(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := os.MkdirAll(filepath.Join(file, ".tychora"), 0o755)
	if !errors.Is(notDir, syscall.ENOTDIR) {
		t.Fatalf("mkdir under a file: %v", notDir)
	}
	pathErr := func(errno syscall.Errno) error {
		return fmt.Errorf("owner lock: %w", &fs.PathError{Op: "open", Path: filepath.Join(ws, ".runtime/owner.lock"), Err: errno})
	}
	cases := []struct {
		name string
		dir  string
		err  error
		code Code
		says string // in the message, after the workspace path
	}{
		{"SQLITE_FULL", ws, sqliteFull(t), CodeUnavailable, "the disk is full"},
		{"ENOSPC", ws, pathErr(syscall.ENOSPC), CodeUnavailable, "the disk is full"},
		{"EDQUOT", ws, pathErr(syscall.EDQUOT), CodeUnavailable, "the disk is full"},
		{"EROFS", ws, pathErr(syscall.EROFS), CodeUnavailable, "read-only file system"},
		{"EACCES", ws, pathErr(syscall.EACCES), CodePermissionDenied, "not allowed to write"},
		{"EPERM", ws, pathErr(syscall.EPERM), CodePermissionDenied, "not allowed to write"},
		{"ENOTDIR", filepath.Join(file, ".tychora"), fmt.Errorf("create workspace: %w", notDir), CodeInvalidArgument, "is a file where a directory must be"},
		{"SQLITE_READONLY", ws, sqliteReadOnly(t, ws), CodePermissionDenied, "not allowed to write"},
		{"SQLITE_CANTOPEN under a file", filepath.Join(file, "ws"), sqliteCantOpen(t, filepath.Join(file, "ws", "index.db")), CodeInvalidArgument, "is a file where a directory must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := StorageError("open the workspace", tc.dir, tc.err)
			p := Public(err)
			if p.Code != tc.code {
				t.Fatalf("code %s, want %s (%v)", p.Code, tc.code, err)
			}
			want := "cannot open the workspace " + tc.dir + ": "
			if !strings.HasPrefix(p.Message, want) || !strings.Contains(p.Message, tc.says) {
				t.Errorf("message %q, want %q ... %q", p.Message, want, tc.says)
			}
			for _, raw := range []string{"sqlite", "SQL", "(13)", "(8)", "(14)", "owner lock", "open index", "owner.lock", "denied", "no space left", "not a directory"} {
				if strings.Contains(p.Message, raw) {
					t.Errorf("message %q shows %q", p.Message, raw)
				}
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("the cause is lost: %v", err)
			}
		})
	}

	// Not a storage problem, or one SQLite and the kernel do not explain:
	// left as it is.
	cantOpen := sqliteCantOpen(t, filepath.Join(ws, "missing", "index.db"))
	for _, err := range []error{
		nil,
		errors.New("boom"),
		pathErr(syscall.EIO),
		cantOpen,
		Errorf(CodeConflict, "another owner runs"),
		Wrap(CodeNotFound, pathErr(syscall.EACCES), "no workspace"),
	} {
		if got := StorageError("open the workspace", ws, err); got != err {
			t.Errorf("%v became %v", err, got)
		}
	}
}
