package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Settings are the flat keys of tychora.json (DESIGN §2). Every key is
// optional; Defaults fills what is missing.
type Settings struct {
	IngestRoots      []string `json:"ingest_roots"`
	Collections      []string `json:"collections"`
	MaxFileBytes     int64    `json:"max_file_bytes"`
	MaxRequestBytes  int64    `json:"max_request_bytes"`
	Workers          int      `json:"workers"`
	TokenCounter     string   `json:"token_counter"`
	DefaultMaxTokens int      `json:"default_max_tokens"`
	QueryHistory     string   `json:"query_history"`
	Listen           string   `json:"listen"`

	impliedRoot bool // ingest_roots was absent and defaulted
}

// Default values of the settings.
const (
	DefaultMaxFileBytes     = 8 << 20
	DefaultMaxRequestBytes  = 4 << 20
	DefaultWorkers          = 2
	DefaultTokenCounter     = "o200k_base"
	DefaultMaxTokens        = 4000
	DefaultQueryHistory     = "metadata"
	DefaultListen           = "127.0.0.1:0"
	DefaultCollection       = "default"
	maxWorkers              = 64
	maxCollectionNameLength = 64
)

var collectionName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// ValidCollectionName reports whether name may name a collection: lowercase
// letters, digits, '.', '_' and '-', starting with a letter or digit, at most
// 64 bytes.
func ValidCollectionName(name string) bool {
	return len(name) <= maxCollectionNameLength && collectionName.MatchString(name)
}

// DefaultSettings returns the settings of a new workspace at dir: the
// ingest root is the directory that holds the workspace. Call Validate
// before use: it refuses an implied root that is / or the home directory.
func DefaultSettings(dir string) Settings {
	s := Settings{}
	s.fill(dir)
	return s
}

// Fill applies the defaults to every key left unset; dir is the workspace.
func (s *Settings) Fill(dir string) { s.fill(dir) }

func (s *Settings) fill(dir string) {
	if len(s.IngestRoots) == 0 {
		s.IngestRoots = []string{filepath.Dir(dir)}
		s.impliedRoot = true
	}
	if len(s.Collections) == 0 {
		s.Collections = []string{DefaultCollection}
	}
	if s.MaxFileBytes == 0 {
		s.MaxFileBytes = DefaultMaxFileBytes
	}
	if s.MaxRequestBytes == 0 {
		s.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if s.Workers == 0 {
		s.Workers = DefaultWorkers
	}
	if s.TokenCounter == "" {
		s.TokenCounter = DefaultTokenCounter
	}
	if s.DefaultMaxTokens == 0 {
		s.DefaultMaxTokens = DefaultMaxTokens
	}
	if s.QueryHistory == "" {
		s.QueryHistory = DefaultQueryHistory
	}
	if s.Listen == "" {
		s.Listen = DefaultListen
	}
}

// Validate checks every key and makes the ingest roots absolute and clean.
// dir is the workspace directory.
func (s *Settings) Validate(dir string) error {
	home, _ := os.UserHomeDir()
	for i, r := range s.IngestRoots {
		if r == "" {
			return Errorf(CodeInvalidArgument, "ingest_roots[%d] is empty", i)
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(filepath.Dir(dir), r)
		}
		r = filepath.Clean(r)
		s.IngestRoots[i] = r
		if r == string(filepath.Separator) {
			return Errorf(CodeInvalidArgument, "ingest root %q: the filesystem root is never an ingest root", r)
		}
		if home != "" && r == filepath.Clean(home) && s.impliedRoot {
			return Errorf(CodeInvalidArgument, "the home directory is never an implied ingest root: name one with --ingest-root")
		}
		if r == dir || isWithin(r, dir) {
			return Errorf(CodeInvalidArgument, "ingest root %q lies inside the workspace, which is never ingested", r)
		}
	}
	seen := map[string]bool{}
	for _, c := range s.Collections {
		if !ValidCollectionName(c) {
			return Errorf(CodeInvalidArgument, "collection name %q: use lowercase letters, digits, '.', '_' or '-' (at most 64)", c)
		}
		if seen[c] {
			return Errorf(CodeInvalidArgument, "collection %q is listed twice", c)
		}
		seen[c] = true
	}
	if s.MaxFileBytes < 1 {
		return Errorf(CodeInvalidArgument, "max_file_bytes must be positive")
	}
	if s.MaxRequestBytes < 1024 {
		return Errorf(CodeInvalidArgument, "max_request_bytes must be at least 1024")
	}
	if s.Workers < 1 || s.Workers > maxWorkers {
		return Errorf(CodeInvalidArgument, "workers must be between 1 and %d", maxWorkers)
	}
	if s.TokenCounter != "o200k_base" && s.TokenCounter != "cl100k_base" {
		return Errorf(CodeInvalidArgument, "token_counter %q: use o200k_base or cl100k_base", s.TokenCounter)
	}
	if s.DefaultMaxTokens < 1 {
		return Errorf(CodeInvalidArgument, "default_max_tokens must be positive")
	}
	if s.QueryHistory != "metadata" && s.QueryHistory != "full" {
		return Errorf(CodeInvalidArgument, "query_history %q: use metadata or full", s.QueryHistory)
	}
	if err := CheckListen(s.Listen); err != nil {
		return err
	}
	return nil
}

// CheckListen accepts only a numeric loopback address 127.0.0.1 or ::1 with
// a port (0 picks a free one).
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err == nil && (perr != nil || n < 0 || n > 65535) {
		err = errors.New("bad port")
	}
	if err != nil {
		return Errorf(CodeInvalidArgument, "listen %q: want 127.0.0.1:PORT or [::1]:PORT", addr)
	}
	if host != "127.0.0.1" && host != "::1" {
		return Errorf(CodeInvalidArgument, "listen %q: tychora listens on 127.0.0.1 or ::1 only", addr)
	}
	return nil
}

// HasCollection reports whether name is a configured collection.
func (s *Settings) HasCollection(name string) bool {
	for _, c := range s.Collections {
		if c == name {
			return true
		}
	}
	return false
}

// LoadSettings reads tychora.json in dir, applies defaults and validates.
// Unknown keys are refused so that a typo does not silently fall back to a
// default.
func LoadSettings(l Layout) (Settings, error) {
	b, err := os.ReadFile(l.Settings)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, Wrap(CodeNotFound, err, "workspace has no tychora.json (run tychora init)")
	}
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, Errorf(CodeInvalidArgument, "tychora.json: %v", err)
	}
	s.fill(l.Dir)
	if err := s.Validate(l.Dir); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// SaveSettings writes s to tychora.json atomically.
func SaveSettings(l Layout, s Settings) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(l.Settings, append(b, '\n'), 0o644)
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so readers see the old or the new file whole.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func isWithin(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel != "." && rel != ".." && !filepath.IsAbs(rel) && !startsWithDotDot(rel)
}

func startsWithDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}
