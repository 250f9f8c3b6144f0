package workspace

import (
	"errors"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrDiskFull is the cause of an UNAVAILABLE error made by DiskFull.
var ErrDiskFull = errors.New("no space left on the disk")

// diskFullMessage is what a caller sees when a write found the disk full.
const diskFullMessage = "the disk is full: free some space, then try again (a failed job can be retried)"

// IsDiskFull reports whether err comes from a full disk: SQLite's
// SQLITE_FULL (a write to the index or its WAL that found no space), or
// ENOSPC or EDQUOT from the file system (an asset, the spool, a settings
// or endpoint file).
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}
