package sources

import (
	"strconv"
	"strings"
)

const (
	codeExtractorName    = "code"
	codeExtractorVersion = "6" // 2: long lines are cut into windows; 3: a class docstring of several lines stays with its class, Rust titles keep pub(crate), Ruby percent and regex literals, the C++ linkage guard of C headers, braces of #else branches; 4: conditional directives (#if, #endif, #region) neither title nor cut declarations; 5: Greek letters named, and hyphens between letters and digits dropped, in the units' code terms; 6: the same, whatever stands around the letter, as the index folds it

	// maxNesting bounds how deep containers (namespace > class > ...) are
	// split into their members.
	maxNesting = 4
	// simpleMaxTokens is the largest one-line statement that is grouped
	// with its one-line neighbours rather than made a section of its own.
	simpleMaxTokens = 80
	// titleMax is the longest section title, in runes.
	titleMax = 80
)

var (
	slashComments = []string{"//"}
	hashComments  = []string{"#"}
	dashComments  = []string{"--"}
)

// codeLangs holds the scanners by language. Languages of kind code that
// are missing here are split into blank-line separated blocks like text.
var codeLangs = func() map[string]*codeLang {
	js := &codeLang{fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true,
		backtick: true, regex: true, prefixes: []string{"@"},
		headers:    []string{"import", "require"},
		containers: []string{"class", "namespace", "module"}}
	c := &codeLang{fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true,
		semicolons: true, preproc: true, headers: []string{"#include", "#import", "#pragma"}}
	cpp := *c
	cpp.digitSep, cpp.raw = true, 'R'
	cpp.prefixes = []string{"template"}
	cpp.headers = []string{"#include", "#import", "#pragma", "using", "import", "module"}
	cpp.containers = []string{"class", "struct", "namespace", "union"}
	java := &codeLang{fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true,
		triple: true, semicolons: true, prefixes: []string{"@"},
		headers:    []string{"package", "import"},
		containers: []string{"class", "interface", "enum", "record"}}
	kotlin := &codeLang{fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", nestedBlock: true,
		singleQuote: true, triple: true, prefixes: []string{"@"},
		headers:    []string{"package", "import"},
		containers: []string{"class", "interface", "object", "enum", "trait"}}
	indent := func(comments []string, cont ...string) *codeLang {
		return &codeLang{fam: famIndent, lineComments: comments, singleQuote: true, cont: cont}
	}
	css := &codeLang{fam: famBrace, blockOpen: "/*", blockClose: "*/", singleQuote: true, semicolons: true, noParenTitle: true}
	scss := *css
	scss.lineComments = slashComments
	m := map[string]*codeLang{
		LangGo: {fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true,
			backtick: true, backtickRaw: true, headers: []string{"package", "import"}},
		LangJavaScript: js,
		LangTypeScript: js,
		LangRust: {fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", nestedBlock: true,
			singleQuote: true, multiLine: true, lifetimes: true, raw: 'r', semicolons: true, prefixes: []string{"#["},
			headers:    []string{"use", "extern", "#!["},
			containers: []string{"impl", "trait", "mod"}},
		LangJava: java,
		LangC:    c,
		LangCPP:  &cpp,
		"objc":   c,
		LangShell: {fam: famShell, lineComments: hashComments, hashComment: true, heredoc: true, multiLine: true,
			singleQuote: true, headers: []string{"set", "source", "."}},
		LangPython: {fam: famIndent, lineComments: hashComments, singleQuote: true, triple: true, tripleSingle: true,
			prefixes: []string{"@"}, headers: []string{"import", "from"}, containers: []string{"class"},
			cont: []string{"else", "elif", "except", "finally"}},
		"csharp": {fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true,
			triple: true, raw: '@', semicolons: true, preproc: true, prefixes: []string{"["},
			headers:    []string{"using"},
			containers: []string{"class", "struct", "interface", "record", "namespace", "enum"}},
		"kotlin": kotlin,
		"scala":  kotlin,
		"groovy": kotlin,
		"dart":   kotlin,
		"swift": {fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", nestedBlock: true,
			triple: true, prefixes: []string{"@"}, headers: []string{"import"},
			containers: []string{"class", "struct", "enum", "extension", "protocol", "actor"}},
		"php": {fam: famBrace, lineComments: []string{"//", "#"}, blockOpen: "/*", blockClose: "*/", singleQuote: true,
			semicolons: true, headers: []string{"<?php", "namespace", "use", "require", "require_once", "include", "include_once"},
			containers: []string{"class", "interface", "trait", "enum"}},
		"zig":        {fam: famBrace, lineComments: slashComments, singleQuote: true, semicolons: true, headers: []string{"const"}},
		"css":        css,
		"scss":       &scss,
		"less":       &scss,
		"sql":        {fam: famBrace, lineComments: dashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true, raw: '$', semicolons: true},
		"protobuf":   {fam: famBrace, lineComments: slashComments, blockOpen: "/*", blockClose: "*/", singleQuote: true, semicolons: true, headers: []string{"syntax", "package", "import", "option"}},
		"graphql":    {fam: famBrace, lineComments: hashComments, triple: true},
		"hcl":        {fam: famBrace, lineComments: []string{"#", "//"}, blockOpen: "/*", blockClose: "*/"},
		"nix":        {fam: famBrace, lineComments: hashComments, blockOpen: "/*", blockClose: "*/"},
		"r":          {fam: famBrace, lineComments: hashComments, singleQuote: true, headers: []string{"library", "require", "source"}},
		"perl":       {fam: famBrace, lineComments: hashComments, singleQuote: true, semicolons: true, headers: []string{"use", "require", "package"}},
		"powershell": {fam: famBrace, lineComments: hashComments, blockOpen: "<#", blockClose: "#>", singleQuote: true},
		"ruby":       indent(hashComments, "end", "else", "elsif", "rescue", "ensure", "when", "in"),
		"lua":        indent(dashComments, "end", "else", "elseif", "until"),
		"elixir":     indent(hashComments, "end", "else", "rescue", "after", "catch"),
		"julia":      indent(hashComments, "end", "else", "elseif", "catch", "finally"),
		"nim":        indent(hashComments, "else", "elif", "except", "finally"),
		"haskell":    indent(dashComments),
		"elm":        indent(dashComments),
		"ocaml":      {fam: famIndent, blockOpen: "(*", blockClose: "*)", nestedBlock: true},
		"fsharp":     {fam: famIndent, lineComments: slashComments, blockOpen: "(*", blockClose: "*)"},
		"clojure":    {fam: famIndent, lineComments: []string{";"}},
		"lisp":       {fam: famIndent, lineComments: []string{";"}},
		"scheme":     {fam: famIndent, lineComments: []string{";"}},
		"erlang":     {fam: famIndent, lineComments: []string{"%"}},
		"make":       indent(hashComments, "endif", "else", "endef"),
		"dockerfile": indent(hashComments),
		"cmake":      indent(hashComments),
		"starlark": {fam: famIndent, lineComments: hashComments, singleQuote: true, triple: true, tripleSingle: true,
			headers: []string{"load"}},
	}
	m["ruby"].headers = []string{"require", "require_relative"}
	m["ruby"].containers = []string{"class", "module"}
	m["ruby"].singleQuote = true
	m["ruby"].percent, m["ruby"].regex = true, true
	m["haskell"].headers = []string{"module", "import"}
	m["elm"].headers = []string{"module", "import"}
	m["haskell"].blockOpen, m["haskell"].blockClose, m["haskell"].nestedBlock = "{-", "-}", true
	m["elm"].blockOpen, m["elm"].blockClose, m["elm"].nestedBlock = "{-", "-}", true
	m["haskell"].singleQuote, m["elm"].singleQuote = false, false
	m["lua"].blockOpen, m["lua"].blockClose = "--[[", "]]"
	m["julia"].blockOpen, m["julia"].blockClose, m["julia"].triple = "#=", "=#", true
	m["elixir"].triple = true
	m["nim"].triple = true
	m["make"].singleQuote, m["dockerfile"].singleQuote, m["cmake"].singleQuote = false, false, false
	return m
}()

// codeExtractor splits source code into sections at its top-level
// statements: declarations (functions, types, classes, impl blocks, ...)
// and other top-level blocks, each titled by its declaration ("func (s
// *Server) Start", "class Foo", "pub fn new"). Package clauses, imports
// and includes form one section ("package foo" or "imports"). Comments
// attach to the statement after them (a trailing comment to the one
// before); decorators, annotations and attributes attach to the
// declaration they precede. Consecutive one-line statements (constants,
// #defines, assignments) are grouped into one section named by their
// titles. A class, interface, impl, namespace or module larger than
// ChunkMaxTokens is split further: a section for its header and one per
// member, whose heading path starts with the container's title; its
// closing line goes with the last member. Every line of the file belongs
// to exactly one section (blank lines at section edges aside).
type codeExtractor struct {
	language string
	lang     *codeLang // nil: split into blocks like text
}

func newCodeExtractor(language string) codeExtractor {
	return codeExtractor{language: language, lang: codeLangs[language]}
}

func (codeExtractor) Name() string    { return codeExtractorName }
func (codeExtractor) Version() string { return codeExtractorVersion }

// Extract implements Extractor.
func (x codeExtractor) Extract(p string, text string) (Extracted, error) {
	b := newBuilder(text)
	title := fileTitle(p)
	b.document(title)
	b.units[0].Channel = ChannelCode
	code := func(int, int) string { return ChannelCode }
	if x.lang == nil {
		b.chunks(title, 0, len(b.lines), nil, code)
	} else {
		c := &codeScan{lang: x.lang, language: x.language, lines: b.lines, b: b}
		c.info = lexLines(x.lang, b.lines)
		c.build(c.segment(0, len(b.lines), 0, 0), 0, nil, 0)
	}
	return Extracted{
		Kind:     KindCode,
		Language: x.language,
		Title:    title,
		Facets: map[string]string{
			"language":  x.language,
			"is_test":   strconv.FormatBool(testPath(p, x.language)),
			"generated": strconv.FormatBool(generatedFile(p, text)),
		},
		Units: b.units,
	}, nil
}

// codeScan segments one file.
type codeScan struct {
	lang     *codeLang
	language string
	lines    []string
	info     []lineInfo
	b        *builder
}

// stmt is a top-level statement (or a member of a container): the lines
// [from, to), comments before it included; decl is the line that names it
// and lastCode its last line of code (-1 for a comment-only statement).
type stmt struct {
	from, to       int
	decl, lastCode int
}

func (c *codeScan) isCode(i int) bool {
	li := c.info[i]
	return li.inStr || !li.blank && !li.comment
}

// nextCode returns the first line of code in [from, hi), or -1.
func (c *codeScan) nextCode(from, hi int) int {
	for i := from; i < hi; i++ {
		if c.isCode(i) {
			return i
		}
	}
	return -1
}

// complete reports whether a statement at the given depth may end with
// line j.
func (c *codeScan) complete(j, depth int) bool {
	li := c.info[j]
	if li.endInStr || li.endDepth > depth {
		return false
	}
	switch li.last {
	case '\\', ',', '=', '+', '-', '/', '?', ':', '(', '[', '{':
		return false
	case '*':
		return c.lang.fam != famBrace
	case '|':
		return false
	case '&':
		return c.lang.fam == famShell && li.last2 != '&'
	case '>':
		if li.last2 == '=' || li.last2 == '-' {
			return false
		}
	}
	if c.lang.semicolons && !c.selfContained(j) {
		return li.last == ';' || li.last == '}'
	}
	return true
}

// directive reports whether line j is a preprocessor directive.
func (c *codeScan) directive(j int) bool {
	return c.lang.preproc && !c.info[j].inStr && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.lines[j], bom)), "#")
}

// opening reports whether directive line j opens a conditional block or
// a region.
func (c *codeScan) opening(j int) bool {
	w := c.directiveWord(j)
	return w == "if" || w == "ifdef" || w == "ifndef" || w == "region"
}

// directiveWord is the word of directive line j (if, endif, define, ...).
func (c *codeScan) directiveWord(j int) string {
	w := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(c.lines[j], bom)), "#"))
	if i := strings.IndexAny(w, " \t("); i >= 0 {
		w = w[:i]
	}
	return w
}

// conditionalStmt reports whether a statement is one conditional
// directive (and the comments before it).
func (c *codeScan) conditionalStmt(st stmt) bool {
	return st.decl >= 0 && st.lastCode == st.decl && c.conditional(st.decl)
}

// conditional reports whether line j is a directive that declares
// nothing: conditional compilation, regions, pragmas (not #define).
func (c *codeScan) conditional(j int) bool {
	if !c.directive(j) {
		return false
	}
	switch c.directiveWord(j) {
	case "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "region", "endregion", "pragma", "nullable", "line", "error", "warning":
		return true
	}
	return false
}

// pastDirectives returns the first line of code in [k, hi) that is not a
// preprocessor directive, or -1.
func (c *codeScan) pastDirectives(k, hi int) int {
	for ; k >= 0 && c.directive(k); k = c.nextCode(k+1, hi) {
	}
	return k
}

// openAcrossDirectives reports whether a statement begun at line seg,
// which its code so far ends at line end, may go on past directives: it
// does not begin with one, and no ';' or '}' ended it.
func (c *codeScan) openAcrossDirectives(seg, end int) bool {
	if !c.lang.preproc || c.directive(seg) {
		return false
	}
	for j := end; j > seg && (c.directive(j) || !c.isCode(j)); j-- {
		end = j - 1
	}
	li := c.info[end]
	return li.last != ';' && li.last != '}'
}

// selfContained reports whether line j is complete by itself in a
// language whose statements end with ';': preprocessor lines and PHP tags.
func (c *codeScan) selfContained(j int) bool {
	li := c.info[j]
	if c.lang.preproc && li.first == '#' {
		return true
	}
	return li.first == '<' && strings.HasPrefix(strings.TrimSpace(c.lines[j]), "<?") || li.first == '?'
}

// softIncomplete reports whether line j lacks only its ';' to be complete.
func (c *codeScan) softIncomplete(j, depth int) bool {
	li := c.info[j]
	if !c.lang.semicolons || li.endInStr || li.endDepth > depth {
		return false
	}
	switch li.last {
	case '\\', ',', '=', '+', '-', '/', '?', ':', '(', '[', '{', '*', '|', '&', '<', '>', '.':
		return false
	}
	return true
}

// continues reports whether line k belongs to the statement before it
// rather than starting a new one at the given depth and indentation.
func (c *codeScan) continues(k, depth, base int) bool {
	li := c.info[k]
	if li.inStr || li.startDepth > depth || li.indent > base {
		return true
	}
	switch li.first {
	case ')', ']', '}':
		return true
	case '{', '.':
		return c.lang.fam == famBrace
	}
	if len(c.lang.cont) > 0 {
		w := firstWord(c.lines[k])
		for _, cw := range c.lang.cont {
			if w == cw {
				return true
			}
		}
	}
	return false
}

// prefixLine reports whether line j is a decorator, annotation or
// attribute of the declaration after it.
func (c *codeScan) prefixLine(j int) bool {
	t := strings.TrimSpace(c.lines[j])
	if c.language == LangCPP && strings.HasSuffix(t, ":") && !strings.HasSuffix(t, "::") {
		switch strings.TrimSpace(strings.TrimSuffix(t, ":")) {
		case "public", "private", "protected", "signals", "slots", "public slots", "private slots", "protected slots":
			return true // an access label belongs to the member after it
		}
	}
	for _, p := range c.lang.prefixes {
		if strings.HasPrefix(t, p) && !strings.HasPrefix(t, "@interface") {
			return true
		}
	}
	return false
}

// onlyPrefixes reports whether the code lines [from, to] at the given
// depth are all decorators, annotations or attributes (so the statement
// they make up belongs to the declaration after them).
func (c *codeScan) onlyPrefixes(from, to, depth int) bool {
	for j := from; j <= to; j++ {
		if c.isCode(j) && !c.info[j].inStr && c.info[j].startDepth == depth && !c.prefixLine(j) {
			return false
		}
	}
	return true
}

// blankBetween reports whether a blank line lies between lines a and b.
func (c *codeScan) blankBetween(a, b int) bool {
	for i := a + 1; i < b; i++ {
		if c.info[i].blank {
			return true
		}
	}
	return false
}

// segment splits lines [lo, hi) into statements that start at bracket
// depth depth and indentation at most base.
func (c *codeScan) segment(lo, hi, depth, base int) []stmt {
	var out []stmt
	pending := -1 // first comment line waiting for the statement it documents
	for i := lo; i < hi; {
		if !c.isCode(i) {
			if pending < 0 && c.info[i].comment {
				pending = i
			}
			i++
			continue
		}
		from := i
		if pending >= 0 {
			from, pending = pending, -1
		}
		seg, end := i, i
		for {
			for !c.complete(end, depth) {
				k := c.nextCode(end+1, hi)
				if k < 0 {
					end = hi - 1
					break
				}
				if c.softIncomplete(end, depth) && !c.prefixLine(seg) && c.blankBetween(end, k) && !c.continues(k, depth, base) {
					break
				}
				end = k
			}
			if end >= hi-1 {
				break
			}
			k := c.nextCode(end+1, hi)
			if k < 0 {
				break
			}
			if k2 := c.pastDirectives(k, hi); k2 != k && k2 >= 0 && c.openAcrossDirectives(seg, end) && c.continues(k2, depth, base) {
				// A declaration's header goes on past #if lines: a C# base
				// list, an Allman brace after #endif.
				end = k2
				continue
			}
			if c.continues(k, depth, base) {
				end = k
				continue
			}
			if c.onlyPrefixes(seg, end, depth) {
				seg, end = k, k
				continue
			}
			break
		}
		out = append(out, stmt{from: from, to: end + 1})
		i = end + 1
	}
	if pending >= 0 {
		if len(out) > 0 {
			out[len(out)-1].to = hi
		} else {
			out = append(out, stmt{from: pending, to: hi})
		}
	}
	for k := range out {
		st := &out[k]
		st.decl, st.lastCode = -1, -1
		for j := st.from; j < st.to; j++ {
			if !c.isCode(j) {
				continue
			}
			if st.decl < 0 && !c.info[j].inStr && !c.prefixLine(j) && c.info[j].startDepth == depth {
				st.decl = j
			}
			st.lastCode = j
		}
		if st.decl < 0 {
			st.decl = c.nextCode(st.from, st.to)
		}
	}
	return out
}

// Statement classes for grouping.
const (
	stmtHeader = iota // package, import, include
	stmtSimple        // a short one-line statement
	stmtBlock         // anything else
)

func (c *codeScan) classify(st stmt, fileStart bool) int {
	if st.decl < 0 {
		return stmtSimple
	}
	line := strings.TrimSpace(c.lines[st.decl])
	w := firstWord(line)
	for _, h := range c.lang.headers {
		if w == h || strings.HasPrefix(h, "#") && strings.HasPrefix(line, h) {
			if c.language == "zig" && !strings.Contains(line, "@import") {
				break
			}
			return stmtHeader
		}
	}
	if fileStart && line != "" && (line[0] == '"' || line[0] == '\'') {
		return stmtHeader // a module docstring, "use strict"
	}
	if c.language == LangJavaScript || c.language == LangTypeScript {
		if strings.Contains(line, "require(") && (w == "const" || w == "let" || w == "var") {
			return stmtHeader
		}
		if w == "export" && strings.Contains(line, " from ") && !strings.Contains(line, "{") || strings.HasPrefix(line, "export {") && strings.Contains(line, "from") {
			return stmtHeader
		}
	}
	if st.lastCode == st.decl && c.tokens(st.from, st.to) <= simpleMaxTokens {
		return stmtSimple
	}
	return stmtBlock
}

func (c *codeScan) tokens(from, to int) int {
	tok := c.b.lineTokens()
	n := 0
	for i := from; i < to; i++ {
		n += tok[i]
	}
	return n
}

// build turns statements into sections (splitting large containers).
func (c *codeScan) build(stmts []stmt, depth int, path []string, level int) {
	score := func(i int) int { return c.score(i, depth) }
	code := func(int, int) string { return ChannelCode }
	for k := 0; k < len(stmts); {
		cls := c.classify(stmts[k], level == 0 && k == 0)
		if c.conditionalStmt(stmts[k]) {
			// #if, #region and their kin go with the statements after
			// them: a run of imports under #if stays one unit of imports.
			for j := k + 1; j < len(stmts); j++ {
				if !c.conditionalStmt(stmts[j]) {
					if cj := c.classify(stmts[j], false); cj != stmtBlock {
						cls = cj
					}
					break
				}
			}
		}
		if cls == stmtBlock {
			st := stmts[k]
			t := c.title(st)
			if level >= maxNesting || !c.isContainer(st) || c.tokens(st.from, st.to) <= ChunkMaxTokens || !c.splitContainer(st, depth, path, t, level) {
				c.b.section(t, appendPath(path, t), st.from, st.to, score, code)
			}
			k++
			continue
		}
		m := k + 1
		for m < len(stmts) && (c.classify(stmts[m], false) == cls || c.conditionalStmt(stmts[m])) {
			m++
		}
		for m > k+1 && m < len(stmts) && c.conditionalStmt(stmts[m-1]) && c.opening(stmts[m-1].decl) {
			m-- // an #if opening what follows goes with it
		}
		var t string
		if cls == stmtHeader {
			t = c.headerTitle(stmts[k:m])
		} else {
			var titles []string
			size := 0
			for _, st := range stmts[k:m] {
				if size > titleMax {
					titles = append(titles, "") // joinTitles stops before it
					break
				}
				if m-k > 1 && st.decl >= 0 && c.conditional(st.decl) {
					continue // #endif names nothing beside a declaration
				}
				t := c.title(st)
				titles = append(titles, t)
				size += len(t) + 2
			}
			t = joinTitles(titles)
		}
		c.b.section(t, appendPath(path, t), stmts[k].from, stmts[m-1].to, score, code)
		k = m
	}
}

func appendPath(path []string, t string) []string {
	out := make([]string, 0, len(path)+1)
	return append(append(out, path...), t)
}

// score rates line i as a place to start a chunk inside a statement at
// the given depth: after a blank line at the body's outer level is best.
func (c *codeScan) score(i, depth int) int {
	li := c.info[i]
	switch {
	case li.inStr:
		return breakAvoid
	case li.blank:
		return breakOK
	}
	outer := li.startDepth <= depth+1
	afterBlank := i > 0 && c.info[i-1].blank
	switch {
	case outer && afterBlank:
		return breakBest
	case outer || afterBlank:
		return breakGood
	}
	return breakOK
}

// isContainer reports whether a statement declares a class, namespace or
// the like whose members can be split out.
func (c *codeScan) isContainer(st stmt) bool {
	if st.decl < 0 || len(c.lang.containers) == 0 {
		return false
	}
	for _, w := range strings.Fields(c.lines[st.decl]) {
		if i := strings.IndexAny(w, "<({:"); i >= 0 {
			w = w[:i]
		}
		for _, k := range c.lang.containers {
			if w == k {
				return true
			}
		}
		if w == "(" || w == "=" || w == "{" {
			break
		}
	}
	return false
}

// splitContainer adds a section for the container's header and sections
// for its members. It reports false, adding nothing, when the container's
// body cannot be found.
func (c *codeScan) splitContainer(st stmt, depth int, path []string, title string, level int) bool {
	open := -1 // the line that opens the body
	for j := st.decl; j >= 0 && j < st.to; j++ {
		li := c.info[j]
		if c.lang.fam == famBrace && li.endDepth > depth {
			if li.endDepth == depth+1 && li.last == '{' && !li.endInStr {
				open = j
			}
			break
		}
		if c.lang.fam == famIndent && c.isCode(j) && li.endDepth == depth && !li.endInStr {
			open = j
			break
		}
	}
	if open < 0 {
		return false
	}
	bodyEnd := st.to
	if last := st.lastCode; last > open {
		li := c.info[last]
		w := firstWord(c.lines[last])
		if c.lang.fam == famBrace && li.first == '}' && li.startDepth == depth+1 ||
			c.lang.fam == famIndent && li.indent <= c.info[st.decl].indent && (li.first == ')' || li.first == ']' || li.first == '}' || contains(c.lang.cont, w)) {
			bodyEnd = last
		}
	}
	first := c.nextCode(open+1, bodyEnd)
	if first < 0 {
		return false
	}
	for k := first; k >= 0 && (c.prefixLine(k) || c.directive(k)); {
		// Members are indented like the first one that is not a label,
		// an annotation or a preprocessor directive (written at the
		// margin: #if, #region).
		if k = c.nextCode(k+1, bodyEnd); k >= 0 && !c.prefixLine(k) && !c.directive(k) {
			first = k
		}
	}
	mdepth, mindent := depth, c.info[first].indent
	if c.lang.fam == famBrace {
		mdepth = depth + 1
	} else if mindent <= c.info[st.decl].indent {
		return false
	}
	members := c.segment(open+1, bodyEnd, mdepth, mindent)
	if len(members) == 0 {
		return false
	}
	members[len(members)-1].to = st.to
	header := open + 1
	if m := members[0]; len(members) > 1 && m.decl >= 0 && m.from == m.decl &&
		(m.decl == m.lastCode || c.lang.fam == famIndent) && startsString(c.lines[m.decl]) {
		// A docstring stays with its class, also one of several lines
		// (an indented language's statement that begins with a string is
		// that string).
		header, members = m.to, members[1:]
	}
	hp := appendPath(path, title)
	c.b.section(title, hp, st.from, header, func(i int) int { return c.score(i, depth) }, func(int, int) string { return ChannelCode })
	c.build(members, mdepth, hp, level+1)
	return true
}

// startsString reports whether a line's code begins with a string
// literal, with any of Python's prefixes (r"""…, b'…').
func startsString(line string) bool {
	t := strings.TrimSpace(line)
	i := 0
	for i < len(t) && i < 2 && strings.IndexByte("rRuUbBfF", t[i]) >= 0 {
		i++
	}
	return i < len(t) && (t[i] == '"' || t[i] == '\'')
}

func contains(list []string, w string) bool {
	for _, s := range list {
		if s == w {
			return true
		}
	}
	return false
}

// firstWord returns the leading run of non-space, non-punctuation bytes
// of a line (keeping '#', '.', '<?' and the like that start header words).
func firstWord(line string) string {
	t := strings.TrimLeft(strings.TrimPrefix(line, bom), " \t")
	i := 0
	for i < len(t) && t[i] != ' ' && t[i] != '\t' && t[i] != '(' && t[i] != ':' && t[i] != '{' && t[i] != ';' && t[i] != '\r' && t[i] != '"' && t[i] != '\'' {
		i++
	}
	return t[:i]
}

// headerTitle names a group of package and import statements.
func (c *codeScan) headerTitle(stmts []stmt) string {
	for _, st := range stmts {
		if st.decl < 0 {
			continue
		}
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(c.lines[st.decl], bom)), ";"))
		if len(f) >= 2 && (f[0] == "package" || f[0] == "module" && c.language != LangCPP) {
			return f[0] + " " + f[1]
		}
	}
	if c.lang.fam == famShell {
		// set -euo pipefail, source lib.sh
		titles := make([]string, 0, len(stmts))
		for _, st := range stmts {
			titles = append(titles, c.title(st))
		}
		return joinTitles(titles)
	}
	return "imports"
}

// joinTitles names a group of one-line statements by their titles.
func joinTitles(titles []string) string {
	var sb strings.Builder
	for i, t := range titles {
		if i > 0 {
			sb.WriteString(", ")
		}
		if sb.Len()+len(t) > titleMax {
			sb.WriteString("…")
			break
		}
		sb.WriteString(t)
	}
	return sb.String()
}
