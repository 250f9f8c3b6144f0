package sources

import (
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/tychora/tychora/workspace"
)

// Kind is what a source is: one file, a folder, or a git repository's
// working tree.
type Kind string

// The source kinds (DESIGN §3).
const (
	KindFile       Kind = "file"
	KindFolder     Kind = "folder"
	KindRepository Kind = "repository"
)

// Valid reports whether k is one of the three kinds.
func (k Kind) Valid() bool {
	return k == KindFile || k == KindFolder || k == KindRepository
}

// SourceInput is what a caller asks to add (DESIGN §3). Path is absolute, or
// relative to the first ingest root; Include and Exclude are doublestar
// globs matched against slash-separated paths relative to the source root.
type SourceInput struct {
	Kind         Kind     `json:"kind,omitempty"`
	Path         string   `json:"path,omitempty"`
	CollectionID string   `json:"collection_id,omitempty"`
	Include      []string `json:"include,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	Name         string   `json:"name,omitempty"`
	// Watch false opts the source out of the owner's watching; absent
	// keeps what the source had (watched, for a new one).
	Watch *bool `json:"watch,omitempty"`

	// The selection form (vision.go): the text a caller saw in an image
	// selection that inspect source_selections listed, instead of a
	// path. CollectionID may name the selection's collection; Kind,
	// Path, the globs, Name and Watch stay empty.
	SelectionID string `json:"selection_id,omitempty"`
	SourceID    string `json:"source_id,omitempty"`
	RevisionID  string `json:"revision_id,omitempty"`
	SHA256      string `json:"sha256,omitempty"`
	Text        string `json:"text,omitempty"`
	Model       string `json:"model,omitempty"`
}

// Limits on a SourceInput.
const (
	MaxPathBytes = 4096
	MaxGlobs     = 128
	MaxNameBytes = 256
)

// ResolvedSource is a SourceInput that passed the path policy: Path is the
// real (symlink-free) absolute path inside Root, an ingest root.
type ResolvedSource struct {
	Kind         Kind
	Path         string
	Root         string
	CollectionID string
	Name         string
	Include      []string
	Exclude      []string
	Watch        *bool
}

// validateInput checks everything in the input that does not need the file
// system.
func validateInput(in SourceInput) error {
	if in.IsSelection() {
		return workspace.Errorf(workspace.CodeInvalidArgument, "selection_id, source_id, revision_id, sha256, text and model make the selection form, which takes no path")
	}
	if in.Kind != "" && !in.Kind.Valid() {
		return workspace.Errorf(workspace.CodeInvalidArgument, "kind %q: use file, folder or repository", string(in.Kind))
	}
	if in.Path == "" {
		return workspace.Errorf(workspace.CodeInvalidArgument, "path is required")
	}
	if len(in.Path) > MaxPathBytes {
		return workspace.Errorf(workspace.CodeInvalidArgument, "path is longer than %d bytes", MaxPathBytes)
	}
	if strings.IndexByte(in.Path, 0) >= 0 || !utf8.ValidString(in.Path) {
		return workspace.Errorf(workspace.CodeInvalidArgument, "path must be valid UTF-8 without NUL bytes")
	}
	if in.CollectionID != "" && !workspace.ValidCollectionName(in.CollectionID) {
		return workspace.Errorf(workspace.CodeInvalidArgument, "collection_id %q is not a valid collection name", in.CollectionID)
	}
	if len(in.Name) > MaxNameBytes || !utf8.ValidString(in.Name) || strings.ContainsAny(in.Name, "\x00\n\r") {
		return workspace.Errorf(workspace.CodeInvalidArgument, "name must be one line of valid UTF-8, at most %d bytes", MaxNameBytes)
	}
	if err := validateGlobs("include", in.Include); err != nil {
		return err
	}
	return validateGlobs("exclude", in.Exclude)
}

// globProblem is what makes g unusable as an include or exclude glob, or
// "": doublestar syntax within the glob limits, relative (no leading
// '/'), no '..' element.
func globProblem(g string) string {
	if _, p := expandGlob(g); p != "" {
		return p
	}
	if strings.HasPrefix(g, "/") {
		return "globs are relative to the source root"
	}
	for _, el := range strings.Split(g, "/") {
		if el == ".." {
			return "'..' is not allowed"
		}
	}
	return ""
}

func validateGlobs(field string, gs []string) error {
	if len(gs) > MaxGlobs {
		return workspace.Errorf(workspace.CodeInvalidArgument, "%s: at most %d globs", field, MaxGlobs)
	}
	for i, g := range gs {
		if p := globProblem(g); p != "" {
			return workspace.Errorf(workspace.CodeInvalidArgument, "%s[%d] %q: %s", field, i, workspace.Clip(g, 64), p)
		}
	}
	if _, err := CompileGlobs(folderGlobs(gs)); err != nil {
		return workspace.Errorf(workspace.CodeInvalidArgument, "%s%v", field, err)
	}
	return nil
}

// globSet matches slash-separated relative paths against the include or
// exclude globs of a source.
type globSet struct {
	compiled *GlobSet
	raw      []string // when the globs predate the limits and do not compile
}

// folderGlobs returns gs with "docs/" made "docs/**": a trailing slash
// names the folder and everything in it, as in a .gitignore (doublestar
// alone would match nothing).
func folderGlobs(gs []string) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		if strings.HasSuffix(g, "/") {
			g += "**"
		}
		out[i] = g
	}
	return out
}

// newGlobSet is the globs gs, compiled once for a walk.
func newGlobSet(gs []string) globSet {
	gs = folderGlobs(gs)
	if c, err := CompileGlobs(gs); err == nil {
		return globSet{compiled: c}
	}
	return globSet{raw: gs}
}

func (gs globSet) match(rel string) bool {
	if gs.compiled != nil {
		return gs.compiled.Match(rel)
	}
	for _, g := range gs.raw {
		if doublestar.MatchUnvalidated(g, rel) {
			return true
		}
	}
	return false
}

func (gs globSet) empty() bool {
	return (gs.compiled == nil || gs.compiled.Len() == 0) && len(gs.raw) == 0
}
