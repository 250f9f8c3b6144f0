package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// DefaultExcludes names the directories every folder and repository
	// walk leaves out by name (docs/ingest.md, "Default excludes"). Absent
	// (nil) means the built-in list, DefaultExcludes(); a list replaces
	// it, and [] leaves out nothing but .git, which is always in the list.
	DefaultExcludes []string `json:"default_excludes,omitempty"`
	// TapeRedact lists regular expressions (RE2) whose matches a tape
	// writes as [REDACTED], on top of the secrets it always redacts
	// (docs/tapes.md). discover settings does not list it: a pattern may
	// spell out the secret it hides.
	TapeRedact []string `json:"tape_redact,omitempty"`
	// Watch turns the owner's watching of folder and repository sources
	// on (absent: on) or off (docs/ingest.md, "Watching").
	Watch *bool `json:"watch,omitempty"`

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
	maxDefaultExcludes      = 256
	maxExcludeNameLength    = 255
)

// GitDir is the directory name that is always in the default excludes: a
// repository is its working tree (DESIGN §3), and git's own directory holds
// its object store and, in config, possibly credentials.
const GitDir = ".git"

// builtinExcludes are directories that are never source: version control,
// installed dependencies, virtual environments, and the caches and build
// state of tools. A name joins only when it is never a real source folder
// (not env, target, build, dist, coverage, vendor, .idea or .vscode: see
// docs/ingest.md). Sorted.
var builtinExcludes = []string{
	".angular", ".build", ".bzr", ".cache", ".conda", ".dart_tool", ".direnv",
	".docusaurus", ".eggs", ".git", ".gradle", ".hg", ".hypothesis",
	".ipynb_checkpoints", ".jj", ".m2", ".mypy_cache", ".next", ".nox",
	".nuxt", ".nyc_output", ".parcel-cache", ".pnpm-store", ".pytest_cache",
	".pytype", ".ruff_cache", ".sass-cache", ".stack-work", ".svelte-kit",
	".svn", ".terraform", ".tox", ".turbo", ".tychora", ".venv", ".zig-cache",
	"__pycache__", "__pypackages__", "bower_components", "dist-newstyle",
	"elm-stuff", "jspm_packages", "node_modules", "venv", "zig-cache",
}

// Watching reports whether the owner watches sources (the watch key;
// absent means on).
func (s Settings) Watching() bool { return s.Watch == nil || *s.Watch }

// DefaultExcludes returns the built-in default excludes, sorted: the
// directories a walk leaves out by name when tychora.json names no
// default_excludes.
func DefaultExcludes() []string { return slices.Clone(builtinExcludes) }

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

// Fill applies the defaults to every key left unset: absent, or zero (0,
// "" or an empty list; docs/architecture.md documents that a zero value
// means the default). dir is the workspace.
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
	if s.Watch == nil {
		on := true
		s.Watch = &on
	}
	if s.DefaultExcludes == nil {
		s.DefaultExcludes = DefaultExcludes()
	} else {
		s.DefaultExcludes = slices.Clone(s.DefaultExcludes)
		if !slices.Contains(s.DefaultExcludes, GitDir) {
			s.DefaultExcludes = append(s.DefaultExcludes, GitDir)
		}
		slices.Sort(s.DefaultExcludes)
	}
}

// Validate checks every key and makes the ingest roots absolute and clean.
// dir is the workspace directory. Roots are compared after their symlinks
// are resolved, and so is the home directory: "/" is never an ingest root,
// the home directory never an implied one, and a root never lies inside
// the workspace, however they are spelled.
func (s *Settings) Validate(dir string) error {
	dir = filepath.Clean(dir)
	realDir := ResolveSymlinks(dir)
	var homes []string // as given and resolved
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		home = filepath.Clean(home)
		homes = append(homes, home, ResolveSymlinks(home))
	}
	for i, r := range s.IngestRoots {
		if r == "" {
			return Errorf(CodeInvalidArgument, "ingest_roots[%d] is empty", i)
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(filepath.Dir(dir), r)
		}
		r = filepath.Clean(r)
		s.IngestRoots[i] = r
		real := ResolveSymlinks(r)
		via := ""
		if real != r {
			via = " (through a symlink)"
		}
		if real == string(filepath.Separator) {
			return Errorf(CodeInvalidArgument, "ingest root %q is the file system root%s, which is never an ingest root", r, via)
		}
		if s.impliedRoot && (slices.Contains(homes, r) || slices.Contains(homes, real)) {
			return Errorf(CodeInvalidArgument, "the implied ingest root %q is the home directory%s, which is never an implied ingest root: name one with --ingest-root or in ingest_roots", r, via)
		}
		if r == dir || isWithin(r, dir) || real == realDir || isWithin(real, realDir) {
			return Errorf(CodeInvalidArgument, "ingest root %q lies inside the workspace%s, which is never ingested", r, via)
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
	if err := checkDefaultExcludes(s.DefaultExcludes); err != nil {
		return err
	}
	return checkTapeRedact(s.TapeRedact)
}

// RegexpProblem is what is wrong with a pattern regexp.Compile refused,
// without the pattern itself (which may spell out a secret).
func RegexpProblem(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return "invalid pattern"
}

// maxTapeRedact is the most patterns tape_redact takes.
const maxTapeRedact = 64

// checkTapeRedact accepts RE2 regular expressions that cannot match the
// empty string, at most 64.
func checkTapeRedact(patterns []string) error {
	if len(patterns) > maxTapeRedact {
		return Errorf(CodeInvalidArgument, "tape_redact lists %d patterns, at most %d", len(patterns), maxTapeRedact)
	}
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return Errorf(CodeInvalidArgument, "tape_redact[%d] is not a regular expression (RE2): %s", i, RegexpProblem(err))
		}
		if re.MatchString("") {
			return Errorf(CodeInvalidArgument, "tape_redact[%d] matches the empty string", i)
		}
	}
	return nil
}

// checkDefaultExcludes accepts directory names, each matched exactly
// against one path element: not empty, not "." or "..", no separator, NUL
// or glob character, valid UTF-8, at most 255 bytes; each listed once, at
// most 256.
func checkDefaultExcludes(names []string) error {
	if len(names) > maxDefaultExcludes {
		return Errorf(CodeInvalidArgument, "default_excludes lists %d names, at most %d", len(names), maxDefaultExcludes)
	}
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case n == "" || n == "." || n == "..":
			return Errorf(CodeInvalidArgument, "default_excludes: %q is not a directory name", n)
		case !utf8.ValidString(n) || len(n) > maxExcludeNameLength:
			return Errorf(CodeInvalidArgument, "default_excludes: %q is not a directory name (valid UTF-8, at most %d bytes)", strings.ToValidUTF8(truncateName(n), "\uFFFD"), maxExcludeNameLength)
		case strings.ContainsAny(n, "/\\\x00"):
			return Errorf(CodeInvalidArgument, "default_excludes: %q is not a directory name: it holds a path separator or NUL (a name matches one path element, at any depth)", truncateName(n))
		case strings.ContainsAny(n, "*?[{"):
			return Errorf(CodeInvalidArgument, "default_excludes: %q: names are matched exactly, without glob characters (a source's exclude globs take patterns)", truncateName(n))
		case seen[n]:
			return Errorf(CodeInvalidArgument, "default_excludes: %q is listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// truncateName shortens a long name for a message.
func truncateName(n string) string {
	if len(n) > 64 {
		return n[:64] + "..."
	}
	return n
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
// The file must hold exactly one JSON object and nothing but white space
// after it; its keys must be the known ones, spelled exactly (they are
// case-sensitive), each at most once and not null. Unknown keys are refused
// so that a typo does not silently fall back to a default. Every refusal is
// INVALID_ARGUMENT and names the file.
func LoadSettings(l Layout) (Settings, error) {
	b, err := os.ReadFile(l.Settings)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, Wrap(CodeNotFound, err, "workspace has no tychora.json (run tychora init)")
	}
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	s, err := decodeSettings(b)
	if err != nil {
		return Settings{}, inSettingsFile(l, err)
	}
	s.fill(l.Dir)
	if err := s.Validate(l.Dir); err != nil {
		return Settings{}, inSettingsFile(l, err)
	}
	return s, nil
}

// inSettingsFile prefixes the message of err, an *Error, with the file.
func inSettingsFile(l Layout, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Code: e.Code, Message: l.Settings + ": " + e.Message, Err: e.Err}
}

// settingsKeys maps each key of tychora.json to the index of its field in
// Settings.
var settingsKeys = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}()

// decodeSettings decodes the text of tychora.json strictly: one object,
// known keys matched exactly (encoding/json alone would match them
// case-insensitively, take the last of a duplicate, accept null and ignore
// what follows the object).
func decodeSettings(b []byte) (Settings, error) {
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err == io.EOF {
		return s, Errorf(CodeInvalidArgument, "the file is empty: want a JSON object ({} for every default)")
	}
	if err != nil {
		return s, Errorf(CodeInvalidArgument, "not valid JSON: %v", err)
	}
	if tok != json.Delim('{') {
		return s, Errorf(CodeInvalidArgument, "want a JSON object ({} for every default), not %s", jsonKind(tok))
	}
	v := reflect.ValueOf(&s).Elem()
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return s, Errorf(CodeInvalidArgument, "not valid JSON: %v", err)
		}
		key, _ := tok.(string) // an object's key is always a string
		i, ok := settingsKeys[key]
		if !ok {
			return s, unknownKey(key)
		}
		if seen[key] {
			return s, Errorf(CodeInvalidArgument, "key %q appears twice", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return s, Errorf(CodeInvalidArgument, "key %q: not valid JSON: %v", key, err)
		}
		if string(raw) == "null" {
			return s, Errorf(CodeInvalidArgument, "key %q is null: leave it out for the default", key)
		}
		f := v.Field(i)
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return s, Errorf(CodeInvalidArgument, "key %q: want %s, not %s", key, jsonType(f.Type()), describe(raw))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return s, Errorf(CodeInvalidArgument, "not valid JSON: %v", err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return s, Errorf(CodeInvalidArgument, "unexpected text after the settings object: %v", err)
		}
		return s, Errorf(CodeInvalidArgument, "unexpected text after the settings object (%s): the file holds one JSON object", jsonKind(tok))
	}
	return s, nil
}

// unknownKey words the refusal of key, with the known key it differs from
// only in case when there is one.
func unknownKey(key string) error {
	if len(key) > 64 {
		key = strings.ToValidUTF8(key[:64], "") + "..."
	}
	for k := range settingsKeys {
		if strings.EqualFold(k, key) {
			return Errorf(CodeInvalidArgument, "unknown key %q: keys are case-sensitive, did you mean %q?", key, k)
		}
	}
	known := slices.Sorted(maps.Keys(settingsKeys))
	return Errorf(CodeInvalidArgument, "unknown key %q (known keys: %s)", key, strings.Join(known, ", "))
}

// jsonKind names what a JSON token is, for messages.
func jsonKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	}
	return "a value"
}

// describe quotes a short JSON value and names the kind of a long one, for
// messages.
func describe(raw json.RawMessage) string {
	if len(raw) <= 40 {
		return string(raw)
	}
	tok, _ := json.NewDecoder(bytes.NewReader(raw)).Token()
	return jsonKind(tok)
}

// jsonType names the JSON a settings field takes, for messages.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "an array of strings"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Pointer:
		return "true or false"
	default:
		return "a string"
	}
}

// SaveSettings writes s to tychora.json atomically. default_excludes is
// left out when it is the built-in list, so that the workspace follows the
// built-in list of later versions.
func SaveSettings(l Layout, s Settings) error {
	switch {
	case slices.Equal(s.DefaultExcludes, builtinExcludes):
		s.DefaultExcludes = nil
	case s.DefaultExcludes != nil && len(s.DefaultExcludes) == 0:
		// [] (nothing but .git) must not travel as an absent key, which
		// means the built-in list.
		s.DefaultExcludes = []string{GitDir}
	}
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
