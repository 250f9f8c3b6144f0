package query

import (
	"bytes"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
)

// Definitions: which unit declares a name of the question (its title), how
// much the boost for it weighs, and titles that hold a name inside an
// identifier (the named-test boost). rank_file.go applies them.

// definitionScale scales the definition boost by how much of the question
// its names are: a question that is a name ("ParseIP", "sync.Mutex",
// "func ReadRequest") wants the definition; in a sentence that mentions
// one among other words ("dial with a fallback between IPv4 and IPv6")
// the name is one word of the topic, and its definition gains in
// proportion, fully from defShareFull of the question's weight × idf.
func (q *preparedQuery) definitionScale() float64 {
	named, total := 0.0, 0.0
	for i, t := range q.terms {
		if t.weight <= 0 || t.idf <= 0 {
			continue
		}
		w := t.weight * t.idf
		total += w
		if pt := &q.pq.terms[i]; pt.name || pt.kind == termWhole {
			named += w
		}
	}
	if total == 0 {
		return 1
	}
	return min(1, named/total/defShareFull)
}

// defShareFull is the share of the question's weight its names must hold
// for the whole definition boost.
const defShareFull = 0.5

// definesName reports how strongly the candidate defines a name of the
// question: 1 when its title declares the name and, for a qualified name,
// its path holds the qualifier's last word as a folder; defOtherPackage
// when the qualifier is elsewhere; 0 when it declares none of them.
func definesName(names []qname, c *candidate) float64 {
	if len(names) == 0 || c.title == "" || c.kind != sources.KindCode {
		return 0
	}
	first, last := declaredNames(c.title)
	if first == "" {
		return 0
	}
	out := 0.0
	for _, n := range names {
		q := n.qualifier
		if n.name != first && n.name != last {
			// A class that holds the method the question qualifies by
			// it (Buffer.write_string in "class Buffer" whole, as the
			// extractors of class-per-unit languages cut it) defines it
			// too, in its type's package.
			if len(q) == 0 || first != q[len(q)-1] || !holdsWord(c.text, n.name) ||
				len(q) > 1 && !qualifierIsDir(c.path, q[:len(q)-1]) {
				continue
			}
			out = max(out, 1)
			continue
		}
		var d float64
		switch {
		case len(q) == 0 || qualifierIsDir(c.path, q):
			d = 1
		case ownedBy(c, q[len(q)-1]) && (len(q) == 1 || qualifierIsDir(c.path, q[:len(q)-1])):
			// A method qualified by its type, and by the type's package
			// when the qualifier says more (bytes.Buffer.WriteString).
			d = 1
		case pathHasFolder(c.path, n.qualifier[len(n.qualifier)-1]):
			d = defDeeperPackage
		default:
			d = defOtherPackage
		}
		if n.raw != "" && !holdsExactName(c.title, n.raw) {
			d *= defOtherCase
		}
		out = max(out, d)
	}
	return out
}

// holdsExactName reports whether title holds name as written, case and
// all, between characters that cannot continue a name (a letter, a
// digit, '_').
func holdsExactName(title, name string) bool {
	inName := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for from := 0; ; {
		i := strings.Index(title[from:], name)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(name)
		before, _ := utf8.DecodeLastRuneInString(title[:i])
		after, _ := utf8.DecodeRuneInString(title[j:])
		if (i == 0 || !inName(before)) && (j == len(title) || !inName(after)) {
			return true
		}
		from = i + 1
	}
}

// holdsWord reports whether text holds w (folded, as the index tokenizes
// it) as a whole token.
func holdsWord(text, w string) bool {
	found := false
	sources.ForEachToken(text, nil, func(tok []byte, _, _ int) bool {
		found = string(tok) == w
		return !found
	})
	return found
}

// ownedBy reports whether the candidate is a member of the type (or
// object) named typ (folded): a title that names both ("res.sendFile",
// "Foo::bar"), a Go method whose receiver is of that type ("func (b
// *Buffer) WriteString"), or a unit under a heading that declares it (a
// method inside "class Buffer" or "impl Buffer").
func ownedBy(c *candidate, typ string) bool {
	if first, last := declaredNames(c.title); first == typ && last != first {
		// A title that qualifies the name itself: "res.sendFile" (res.sendFile
		// = function …), "Foo::bar", "Buffer.write".
		return true
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(c.title), "func ("); ok {
		if i := strings.IndexByte(rest, ')'); i >= 0 && strings.EqualFold(receiverType(rest[:i]), typ) {
			return true
		}
	}
	for _, h := range c.headings {
		if h == c.title {
			continue
		}
		if first, _ := declaredNames(h); first == typ {
			return true
		}
	}
	return false
}

// receiverType is the type of a Go method's receiver, from what its
// parentheses hold: "b *Buffer" → Buffer, "s *Set[T]" → Set, "Map[K, V]"
// → Map.
func receiverType(recv string) string {
	f := strings.Fields(recv)
	if len(f) == 0 {
		return ""
	}
	t := f[0]
	if len(f) > 1 && !strings.ContainsAny(f[0], "*[") {
		t = f[1] // the receiver's name, then its type
	}
	t = strings.TrimLeft(t, "*")
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	return t
}

// qualifierIsDir reports whether the qualifier names the unit's package
// as an import path would (folded): all of its folders (sync for
// sync/mutex.go, net for net/ip.go), or, for a qualifier of several
// words, its last folders (net/http for net/http/server.go). A qualifier
// of one word that is only the last of several folders (internal/sync
// for sync.Mutex) names a package of the same name deeper down, which
// ranks after the one the words name whole.
func qualifierIsDir(p string, qualifier []string) bool {
	dir, _ := path.Split(p)
	folders := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	if dir == "" || len(folders) < len(qualifier) {
		return false
	}
	tail := folders[len(folders)-len(qualifier):]
	for i, q := range qualifier {
		if !strings.EqualFold(tail[i], q) {
			return false
		}
	}
	return len(folders) == len(qualifier) || len(qualifier) > 1
}

// pathHasFolder reports whether a folder of p is named w (folded).
func pathHasFolder(p, w string) bool {
	dir, _ := path.Split(p)
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if strings.EqualFold(d, w) {
			return true
		}
	}
	return false
}

// declaredNames gives the name a declaration title declares, folded: the
// first word after the declaration keywords and modifiers ("func
// ParseIP", "type Mutex struct", "pub fn new", "class HTTPServer") and the
// last word, which is the name in C-like titles ("static int add"). A Go
// method's receiver is skipped ("func (m *Mutex) Lock" declares Lock). A
// title that begins with a keyword its name follows ("var once
// sync.Once", "let x: Config", "class HTTPServer(BaseServer)") declares
// only that name: its last word is a type or a base.
func declaredNames(title string) (first, last string) {
	t := strings.TrimSpace(title)
	if rest, ok := strings.CutPrefix(t, "func ("); ok {
		if i := strings.IndexByte(rest, ')'); i >= 0 {
			t = "func " + rest[i+1:]
		}
	}
	var buf []byte
	lead := ""
	sources.ForEachToken(t, buf, func(tok []byte, _, _ int) bool {
		w := string(tok)
		if lead == "" {
			lead = w
		}
		if first == "" && !declModifier(w) {
			first = w
		}
		last = w
		return true
	})
	if declModifier(last) || nameFollows(lead) {
		last = first
	}
	return first, last
}

// nameFollows reports whether a folded word is a keyword that the
// declared name follows (after any further keywords), so that the rest
// of the title is a type, a base or a value, not the name.
func nameFollows(w string) bool {
	switch w {
	case "func", "function", "fn", "fun", "def", "class", "type", "interface", "trait", "module",
		"defmodule", "protocol", "object", "var", "let", "val", "package", "namespace":
		return true
	}
	return false
}

// declModifier reports whether a folded word is a keyword or modifier
// that comes before a declared name in some language.
func declModifier(w string) bool {
	switch w {
	case "func", "function", "fn", "fun", "def", "class", "struct", "type", "interface", "trait",
		"enum", "impl", "module", "defmodule", "typedef", "record", "protocol", "object", "union",
		"const", "var", "let", "val", "static", "pub", "public", "private", "protected", "internal",
		"export", "default", "async", "abstract", "final", "sealed", "open", "override", "virtual",
		"inline", "extern", "unsafe", "data", "package", "namespace", "async_fn", "crate", "mut":
		return true
	}
	return false
}

// titleNames reports whether the candidate's title holds a name of the
// question inside an identifier, case and underscores aside: TestParseIP,
// test_parse_ip and ExampleParseIP all hold parseip.
func titleNames(names []qname, c *candidate) bool {
	if len(names) == 0 || c.title == "" {
		return false
	}
	return holdsFoldedName(appendFoldedTitle(nil, c.title), foldedNames(names))
}

// appendFoldedTitle appends title as titleNames compares it: in lower
// case, without underscores. The unit index keeps its units' titles so
// (filePart.titles).
func appendFoldedTitle(dst []byte, title string) []byte {
	return append(dst, strings.ToLower(strings.ReplaceAll(title, "_", ""))...)
}

// foldedNames are the names as titleNames looks for them in a folded
// title: without underscores, the empty ones left out.
func foldedNames(names []qname) [][]byte {
	var out [][]byte
	for _, n := range names {
		if w := strings.ReplaceAll(n.name, "_", ""); w != "" {
			out = append(out, []byte(w))
		}
	}
	return out
}

// holdsFoldedName reports whether the folded title t holds one of names
// (foldedNames).
func holdsFoldedName(t []byte, names [][]byte) bool {
	for _, n := range names {
		if bytes.Contains(t, n) {
			return true
		}
	}
	return false
}
