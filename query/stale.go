package query

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
)

// FileState is what the index recorded about a file.
type FileState struct {
	SourcePath string // the source's real absolute path
	SourceKind string // file, folder or repository
	Path       string // relative to the source root, '/'-separated
	Size       int64
	MtimeNs    int64
	SHA256     string // hex of the raw bytes
}

// abs returns the file's absolute path on disk.
func (f FileState) abs() string {
	if f.SourceKind == "file" {
		return f.SourcePath
	}
	return filepath.Join(f.SourcePath, filepath.FromSlash(f.Path))
}

// IsStale reports whether the file on disk no longer has the indexed
// content: gone, unreadable, or with other bytes. Size and modification
// time that match the index are taken as unchanged (the same test a sync
// makes); otherwise the file is hashed.
func IsStale(f FileState) bool {
	p := f.abs()
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return true
	}
	if fi.Size() == f.Size && fi.ModTime().UnixNano() == f.MtimeNs {
		return false
	}
	if fi.Size() != f.Size {
		return true
	}
	fh, err := os.Open(p)
	if err != nil {
		return true
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return true
	}
	return hex.EncodeToString(h.Sum(nil)) != f.SHA256
}
