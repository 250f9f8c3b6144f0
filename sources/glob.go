package sources

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/tychora/tychora/workspace"
)

// Limits on globs: SourceInput include and exclude lists and a search's
// filters.paths. A glob or a list past one is refused (INVALID_ARGUMENT,
// naming the limit); docs/search.md lists them.
const (
	// MaxGlobBytes bounds one glob's UTF-8 size.
	MaxGlobBytes = 1024
	// MaxGlobDepth bounds how deep braces nest in one glob ("{a,{b,c}}"
	// is 2).
	MaxGlobDepth = 4
	// MaxGlobWildcards bounds the '*', '?' and '[' of one glob.
	MaxGlobWildcards = 16
	// MaxGlobAlternatives bounds the brace-free patterns one glob
	// expands to ("{a,b}/{c,d}" is 4).
	MaxGlobAlternatives = 32
	// MaxGlobSetAlternatives bounds the brace-free patterns all globs of
	// one list expand to (after duplicates are dropped): what one path
	// costs to match.
	MaxGlobSetAlternatives = 64
)

// GlobSet is a list of doublestar globs compiled once: each glob's braces
// are expanded, within the limits above, into brace-free patterns, each
// with its literal prefix. Matching a path costs at most one prefix
// comparison and one brace-free doublestar match per pattern, where
// doublestar.Match on braces re-parses the pattern and backtracks through
// every combination of alternatives for each path.
type GlobSet struct {
	pats []globPattern
}

type globPattern struct {
	pat    string
	prefix string // the part before the first meta character
	plain  bool   // no meta character at all: the path must equal pat
}

// GlobError says which glob of a list is refused and why.
type GlobError struct {
	Index   int // -1 when the list as a whole is refused
	Glob    string
	Problem string
}

func (e *GlobError) Error() string {
	if e.Index < 0 {
		return e.Problem
	}
	return fmt.Sprintf("[%d] %q: %s", e.Index, workspace.Clip(e.Glob, 64), e.Problem)
}

// CompileGlobs checks and compiles globs. Each must be valid doublestar
// syntax of valid UTF-8 without NUL bytes; the limits above apply. Its
// error is a *GlobError.
func CompileGlobs(globs []string) (*GlobSet, error) {
	gs := &GlobSet{}
	seen := map[string]bool{}
	for i, g := range globs {
		exp, problem := expandGlob(g)
		if problem != "" {
			return nil, &GlobError{Index: i, Glob: g, Problem: problem}
		}
		for _, p := range exp {
			if seen[p] {
				continue
			}
			seen[p] = true
			if len(gs.pats) == MaxGlobSetAlternatives {
				return nil, &GlobError{Index: -1, Problem: fmt.Sprintf(
					"the globs expand to more than %d brace-free patterns in all; the limit is %d", MaxGlobSetAlternatives, MaxGlobSetAlternatives)}
			}
			pre := globPrefix(p)
			gs.pats = append(gs.pats, globPattern{pat: p, prefix: pre, plain: pre == p})
		}
	}
	return gs, nil
}

// Match reports whether the slash-separated relative path matches one of
// the globs.
func (gs *GlobSet) Match(path string) bool {
	for i := range gs.pats {
		p := &gs.pats[i]
		if p.plain {
			if path == p.pat {
				return true
			}
			continue
		}
		if !strings.HasPrefix(path, p.prefix) {
			continue
		}
		if doublestar.MatchUnvalidated(p.pat, path) {
			return true
		}
	}
	return false
}

// Prefixes returns the literal prefixes every matching path starts with,
// shortest first with those that a shorter one covers left out, or nil
// when some pattern has none (any path may match).
func (gs *GlobSet) Prefixes() []string {
	var out []string
	for _, p := range gs.pats {
		if p.prefix == "" {
			return nil
		}
		out = append(out, p.prefix)
	}
	slices.Sort(out)
	kept := out[:0]
	for _, p := range out {
		if len(kept) > 0 && strings.HasPrefix(p, kept[len(kept)-1]) {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// Len is the number of brace-free patterns.
func (gs *GlobSet) Len() int { return len(gs.pats) }

// globPrefix is the part of a brace-free pattern before its first meta
// character, less the '/' before a "**" ("a/**" matches "a").
func globPrefix(p string) string {
	i := strings.IndexAny(p, `*?[{\`)
	if i < 0 {
		return p
	}
	pre := p[:i]
	if strings.HasPrefix(p[i:], "**") {
		pre = strings.TrimSuffix(pre, "/")
	}
	return pre
}

// expandGlob checks g and returns its brace-free expansions (in the
// order doublestar tries them), or a problem. The scan follows
// doublestar's: '\' escapes the next byte, a class runs from '[' to the
// next unescaped ']', and braces inside a class are literal.
func expandGlob(g string) ([]string, string) {
	switch {
	case g == "":
		return nil, "empty glob"
	case len(g) > MaxGlobBytes:
		return nil, fmt.Sprintf("%d bytes; the limit is %d", len(g), MaxGlobBytes)
	case !utf8.ValidString(g) || strings.IndexByte(g, 0) >= 0:
		return nil, "must be valid UTF-8 without NUL bytes"
	case !doublestar.ValidatePattern(g):
		return nil, "malformed glob"
	}
	wild, depth, maxDepth := 0, 0, 0
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '*', '?':
			wild++
		case '[':
			wild++
			i = classEnd(g, i)
		case '{':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}':
			depth--
		}
	}
	if maxDepth > MaxGlobDepth {
		return nil, fmt.Sprintf("braces nest %d deep; the limit is %d", maxDepth, MaxGlobDepth)
	}
	if wild > MaxGlobWildcards {
		return nil, fmt.Sprintf("%d wildcards ('*', '?', '['); the limit is %d", wild, MaxGlobWildcards)
	}
	root, _ := parseGlobSeq(g, 0, false)
	if n := root.count(); n > MaxGlobAlternatives {
		return nil, fmt.Sprintf("expands to more than %d brace-free patterns; the limit is %d", MaxGlobAlternatives, MaxGlobAlternatives)
	}
	return root.expand(), ""
}

// classEnd returns the index of the ']' that closes the class opened at
// g[i] (the glob is valid, so there is one).
func classEnd(g string, i int) int {
	for i++; i < len(g); i++ {
		if g[i] == '\\' {
			i++
		} else if g[i] == ']' {
			return i
		}
	}
	return len(g)
}

// globSeq is a sequence of literal runs and brace alternations.
type globSeq []globItem

// globItem is literal text (alts nil) or an alternation.
type globItem struct {
	text string
	alts []globSeq
}

// parseGlobSeq parses g from i up to the end, or, inside braces, up to
// the ',' or '}' that ends the alternative; it returns the index of that
// byte.
func parseGlobSeq(g string, i int, inBraces bool) (globSeq, int) {
	var seq globSeq
	start := i
	flush := func(end int) {
		if end > start {
			seq = append(seq, globItem{text: g[start:end]})
		}
	}
	for i < len(g) {
		switch g[i] {
		case '\\':
			i += 2
			continue
		case '[':
			i = classEnd(g, i) + 1
			continue
		case ',', '}':
			if inBraces {
				flush(i)
				return seq, i
			}
		case '{':
			flush(i)
			var alts []globSeq
			j := i + 1
			for {
				alt, end := parseGlobSeq(g, j, true)
				alts = append(alts, alt)
				if end >= len(g) || g[end] == '}' {
					i = end + 1
					break
				}
				j = end + 1
			}
			seq = append(seq, globItem{alts: alts})
			start = i
			continue
		}
		i++
	}
	flush(min(i, len(g)))
	return seq, i
}

// count is how many brace-free patterns seq expands to, saturated just
// past MaxGlobAlternatives.
func (seq globSeq) count() int {
	n := 1
	for _, it := range seq {
		if it.alts == nil {
			continue
		}
		sum := 0
		for _, a := range it.alts {
			sum = min(sum+a.count(), MaxGlobAlternatives+1)
		}
		n = min(n*sum, MaxGlobAlternatives+1)
	}
	return n
}

// expand lists seq's brace-free patterns, leftmost alternation varying
// slowest, as doublestar tries them.
func (seq globSeq) expand() []string {
	out := []string{""}
	for _, it := range seq {
		if it.alts == nil {
			for k := range out {
				out[k] += it.text
			}
			continue
		}
		var tails []string
		for _, a := range it.alts {
			tails = append(tails, a.expand()...)
		}
		next := make([]string, 0, len(out)*len(tails))
		for _, h := range out {
			for _, t := range tails {
				next = append(next, h+t)
			}
		}
		out = next
	}
	return out
}
