package workspace

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// What a workspace's storage can refuse, each with its code (docs/errors.md):
// a full disk and a read-only file system are UNAVAILABLE (the machine's
// state: the same call succeeds once there is space or the file system is
// writable again); a permission the operating system refuses is
// PERMISSION_DENIED (this user may not write there); a path to the
// workspace that runs through a file is INVALID_ARGUMENT (it names
// something impossible).
type storageProblem int

const (
	storageOK storageProblem = iota
	storageFull
	storageReadOnly
	storagePermission
	storageNotDir
)

// StorageError turns a failure to create, open or write the workspace at
// dir into an *Error in plain words that names dir and says what to do;
// op is what was being done ("create the workspace", "open the
// workspace"). It looks at the file system's errno (ENOSPC, EDQUOT, EROFS,
// EACCES, EPERM, ENOTDIR) and SQLite's result codes (SQLITE_FULL,
// SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN, SQLITE_IOERR), never at
// error text; where SQLite does not say why, it asks the kernel whether
// dir may be written. The cause stays in Err, for logs and errors.Is. An
// *Error with a code of its own, nil, and any other error are returned as
// they are.
func StorageError(op, dir string, err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) && e.Code != CodeInternal {
		return err
	}
	switch classifyStorage(dir, err) {
	case storageFull:
		return Wrap(CodeUnavailable, err, fmt.Sprintf("cannot %s %s: the disk is full (free some space, then try again)", op, dir))
	case storageReadOnly:
		return Wrap(CodeUnavailable, err, fmt.Sprintf("cannot %s %s: it is on a read-only file system (remount it read-write, or use a workspace elsewhere)", op, dir))
	case storagePermission:
		return Wrap(CodePermissionDenied, err, fmt.Sprintf("cannot %s %s: this user is not allowed to write there (fix the owner or mode of the directory, run tychora as the user that owns it, or use a workspace elsewhere)", op, dir))
	case storageNotDir:
		return Wrap(CodeInvalidArgument, err, fmt.Sprintf("cannot %s %s: a part of that path is a file where a directory must be (use a workspace elsewhere)", op, dir))
	}
	return err
}

// classifyStorage says which storage problem err is, if any.
func classifyStorage(dir string, err error) storageProblem {
	switch {
	case IsDiskFull(err):
		return storageFull
	case errors.Is(err, syscall.EROFS):
		return storageReadOnly
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return storagePermission
	case errors.Is(err, syscall.ENOTDIR):
		return storageNotDir
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return storageOK
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_PERM:
		return storagePermission
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		// SQLite keeps the errno behind these to itself: ask the kernel
		// whether the workspace and its index may be written.
		if p := probeWritable(dir); p != storageOK {
			return p
		}
		if se.Code()&0xff == sqlite3.SQLITE_READONLY {
			// Writable by the kernel's account, yet opened read-only:
			// the file's own mode refused this user.
			return storagePermission
		}
	}
	return storageOK
}

// probeWritable asks the kernel whether dir and the index in it may be
// written by this process: statfs(2) for space left, then access(2) with
// W_OK, whose EROFS and EACCES say why not.
func probeWritable(dir string) storageProblem {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil && st.Blocks > 0 && st.Bavail == 0 {
		return storageFull
	}
	for _, p := range []string{dir, NewLayout(dir).DB} {
		err := syscall.Access(p, 2 /* W_OK */)
		switch {
		case errors.Is(err, syscall.EROFS):
			return storageReadOnly
		case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			return storagePermission
		case errors.Is(err, syscall.ENOTDIR):
			return storageNotDir
		}
	}
	return storageOK
}
