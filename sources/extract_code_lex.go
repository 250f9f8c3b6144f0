package sources

import "strings"

// The code extractor reads source line by line with a small lexer per
// language family. The lexer knows just enough (comments, strings, raw
// strings, heredocs, bracket depth) to tell where a top-level declaration
// starts and ends; it is not a parser, and on anything it misreads it
// degrades to larger sections, never to lost lines.

// codeFamily is how a language delimits blocks.
type codeFamily uint8

const (
	famBrace  codeFamily = iota // braces and brackets (C, Go, JS, Rust, ...)
	famIndent                   // indentation (Python, Ruby, Haskell, Make, ...)
	famShell                    // shell: braces and if/fi, case/esac, do/done
)

// codeLang is what the lexer and the segmenter know about one language.
type codeLang struct {
	fam          codeFamily
	lineComments []string // "//", "#", "--"
	blockOpen    string   // "/*"
	blockClose   string   // "*/"
	nestedBlock  bool     // block comments nest (Rust, Swift, Kotlin, Haskell)
	singleQuote  bool     // ' opens a string or character literal
	backtick     bool     // ` opens a string that may span lines
	backtickRaw  bool     // ... in which backslash does not escape (Go)
	multiLine    bool     // " and ' strings may span lines (Rust ", shell)
	triple       bool     // """ strings span lines (Python, Kotlin, Java, ...)
	tripleSingle bool     // ''' too (Python)
	lifetimes    bool     // 'a is a lifetime unless it reads as a char literal (Rust)
	digitSep     bool     // 1'000 (C++)
	raw          byte     // 'r': r#"..."# (Rust); 'R': R"x(...)x" (C++); '@': @"..." (C#); '$': $tag$...$tag$ (SQL)
	regex        bool     // /.../ regular expression literals (JS, TS)
	percent      bool     // %w[...], %r{...}, %(...) literals, which may span lines (Ruby)
	hashComment  bool     // '#' starts a comment only at the start of a word (shell)
	heredoc      bool     // <<EOF ... EOF (shell)
	semicolons   bool     // a statement ends with ';' or '}' (C, Java, Rust, ...)
	preproc      bool     // '#' lines are preprocessor directives, complete at the end of line
	prefixes     []string // starts of lines that decorate what follows: "@", "#[", "template"
	noParenTitle bool     // titles are not cut at '(' (CSS: @media (...))
	headers      []string // first words of package, import and include statements
	containers   []string // keywords of declarations whose members can be split out
	cont         []string // first words of lines that continue the statement before
}

// lineInfo is what the lexer learned about one line.
type lineInfo struct {
	blank      bool // only white space
	comment    bool // no code: only comments (or inside a block comment)
	inStr      bool // starts inside a string, raw string or heredoc
	endInStr   bool // ends inside one (or inside a block comment)
	startDepth int  // bracket depth at the start of the line
	endDepth   int  // bracket depth at its end
	indent     int  // width of the leading white space (a tab counts 4)
	first      byte // first code character, 0 when none
	last       byte // last code character outside comments
	last2      byte // the code character before last
}

// lexer carries state from line to line.
type lexer struct {
	lang     *codeLang
	depth    int
	comment  int    // block comment nesting
	str      byte   // quote of an open string, 0 when none
	triple   bool   // the open string is triple-quoted
	verbatim bool   // the open string has no backslash escapes
	rawEnd   string // closing delimiter of an open raw string
	// an open percent literal (Ruby's %w[...]): its delimiters and how
	// deep the brackets it opens are nested in it
	pctOpen, pctClose byte
	pctDepth          int
	heredocs          []heredocSpec
	// shell only: whether the next word is in command position
	cmdPos bool
	// C and C++: the line before was "#ifdef __cplusplus"
	afterCplusplus bool
	// the open #if directives, each true once its #else or #elif branch
	// runs: braces there do not count (each branch of a conditional
	// usually opens what the other does, and only one is compiled)
	pp []bool
}

// ppSkipping reports whether the line is in an #else or #elif branch.
func (lx *lexer) ppSkipping() bool {
	for _, b := range lx.pp {
		if b {
			return true
		}
	}
	return false
}

// directive follows the #if, #else and #endif nesting of a preprocessor
// line (t trimmed, beginning with '#').
func (lx *lexer) directive(t string) {
	w := strings.TrimLeft(t[1:], " \t")
	if i := strings.IndexAny(w, " \t(/"); i >= 0 {
		w = w[:i]
	}
	n := len(lx.pp)
	switch w {
	case "if", "ifdef", "ifndef":
		lx.pp = append(lx.pp, false)
	case "else", "elif", "elifdef", "elifndef":
		if n > 0 {
			lx.pp[n-1] = true
		}
	case "endif":
		if n > 0 {
			lx.pp = lx.pp[:n-1]
		}
	}
}

type heredocSpec struct {
	word  string
	tabs  bool // <<- strips leading tabs
	ready bool // announced on an earlier line: its body is running
}

// lexLines runs the lexer over every line.
func lexLines(lang *codeLang, lines []string) []lineInfo {
	lx := &lexer{lang: lang}
	out := make([]lineInfo, len(lines))
	for i, l := range lines {
		if i == 0 {
			l = strings.TrimPrefix(l, bom)
		}
		if i == 0 && strings.HasPrefix(l, "#!") {
			out[i] = lineInfo{comment: true}
			continue
		}
		out[i] = lx.line(l)
	}
	return out
}

func indentWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

func (lx *lexer) inString() bool {
	return lx.str != 0 || lx.rawEnd != "" || lx.pctClose != 0 || len(lx.heredocs) > 0 && lx.heredocs[0].ready
}

// line lexes one line and updates the state.
func (lx *lexer) line(s string) lineInfo {
	li := lineInfo{
		blank:      isBlank(s),
		inStr:      lx.inString(),
		startDepth: lx.depth,
		indent:     indentWidth(s),
	}
	if len(lx.heredocs) > 0 && lx.heredocs[0].ready {
		h := lx.heredocs[0]
		t := strings.TrimRight(s, "\r")
		if h.tabs {
			t = strings.TrimLeft(t, "\t")
		}
		if t == h.word {
			lx.heredocs = lx.heredocs[1:]
			if len(lx.heredocs) > 0 {
				lx.heredocs[0].ready = true
			}
		}
		li.endInStr = lx.inString()
		li.endDepth = lx.depth
		li.first, li.last = 'x', 'x'
		return li
	}
	lx.cmdPos = true
	code := li.inStr
	L := lx.lang
	if L.preproc && !li.inStr && lx.comment == 0 {
		// The C++ linkage guard of C headers, "#ifdef __cplusplus" /
		// extern "C" { / "#endif" ... "#ifdef __cplusplus" / } /
		// "#endif", opens a block a C compiler never sees (and often never
		// closes): its braces do not nest what they wrap.
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, "#") {
			lx.directive(t)
		}
		guard := lx.afterCplusplus
		lx.afterCplusplus = strings.HasPrefix(t, "#") && strings.Contains(t, "__cplusplus") && !strings.Contains(t, "endif")
		if t == `extern "C" {` || guard && t == "}" {
			li.first, li.last = t[0], '{'
			li.endDepth = lx.depth
			return li
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if lx.comment > 0 {
			switch {
			case strings.HasPrefix(s[i:], L.blockClose):
				lx.comment--
				i += len(L.blockClose)
			case L.nestedBlock && strings.HasPrefix(s[i:], L.blockOpen):
				lx.comment++
				i += len(L.blockOpen)
			default:
				i++
			}
			continue
		}
		if lx.rawEnd != "" {
			if strings.HasPrefix(s[i:], lx.rawEnd) {
				i += len(lx.rawEnd)
				lx.rawEnd = ""
				li.last2, li.last = li.last, '"'
			} else {
				i++
			}
			continue
		}
		if lx.pctClose != 0 {
			i = lx.scanPercent(s, i)
			if lx.pctClose == 0 {
				li.last2, li.last = li.last, '"'
			}
			continue
		}
		if lx.str != 0 {
			i = lx.scanString(s, i)
			if lx.str == 0 {
				li.last2, li.last = li.last, '"'
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
			i++
			continue
		}
		if lx.lineComment(s, i) {
			break
		}
		if L.blockOpen != "" && strings.HasPrefix(s[i:], L.blockOpen) {
			lx.comment = 1
			i += len(L.blockOpen)
			continue
		}
		code = true
		if li.first == 0 {
			li.first = c
		}
		li.last2, li.last = li.last, c
		i = lx.codeChar(s, i, &li)
	}
	// Strings that cannot span lines end with it.
	if lx.str != 0 && !lx.triple && !lx.verbatim && !lx.spans(lx.str) {
		lx.str = 0
	}
	if len(lx.heredocs) > 0 {
		lx.heredocs[0].ready = true
	}
	if L.preproc && lx.ppSkipping() {
		lx.depth = li.startDepth
	}
	li.comment = !code && !li.blank
	li.endDepth = lx.depth
	li.endInStr = lx.inString() || lx.comment > 0
	return li
}

// spans reports whether a string opened by quote q may go on past the end
// of its line.
func (lx *lexer) spans(q byte) bool {
	L := lx.lang
	return L.fam == famShell || q == '`' && L.backtick || q == '"' && L.multiLine
}

// lineComment reports whether a line comment starts at s[i].
func (lx *lexer) lineComment(s string, i int) bool {
	for _, lc := range lx.lang.lineComments {
		if !strings.HasPrefix(s[i:], lc) {
			continue
		}
		if lx.lang.hashComment && lc == "#" && i > 0 && !strings.ContainsRune(" \t;&|()", rune(s[i-1])) {
			continue
		}
		if lx.lang.fam == famShell && lc == "#" && i > 0 && s[i-1] == '$' {
			continue
		}
		return true
	}
	return false
}

// scanString advances through an open string from s[i] and returns the
// index after it, or len(s) when the string goes on past the line.
func (lx *lexer) scanString(s string, i int) int {
	q := lx.str
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && !lx.verbatim:
			i += 2
			continue
		case c != q:
			i++
			continue
		}
		if lx.triple {
			if i+2 < len(s) && s[i+1] == q && s[i+2] == q {
				lx.str, lx.triple = 0, false
				return i + 3
			}
			i++
			continue
		}
		if lx.verbatim && lx.lang.raw == '@' && i+1 < len(s) && s[i+1] == q {
			i += 2 // "" inside a C# verbatim string
			continue
		}
		lx.str, lx.verbatim = 0, false
		return i + 1
	}
	if i > len(s) {
		i = len(s)
	}
	return i
}

// openString starts a string at s[i] (the quote) and scans it.
func (lx *lexer) openString(s string, i int, q byte, triple, verbatim bool) int {
	lx.str, lx.triple, lx.verbatim = q, triple, verbatim
	if triple {
		return lx.scanString(s, i+3)
	}
	return lx.scanString(s, i+1)
}

// codeChar handles the code character at s[i] and returns the next index.
func (lx *lexer) codeChar(s string, i int, li *lineInfo) int {
	L := lx.lang
	c := s[i]
	switch c {
	case '"':
		if j, ok := lx.rawString(s, i); ok {
			return j
		}
		if L.triple && strings.HasPrefix(s[i:], `"""`) {
			return lx.openString(s, i, '"', true, false)
		}
		return lx.openString(s, i, '"', false, false)
	case '\'':
		switch {
		case L.triple && L.tripleSingle && strings.HasPrefix(s[i:], "'''"):
			return lx.openString(s, i, '\'', true, false)
		case L.fam == famShell:
			return lx.openString(s, i, '\'', false, true)
		case !L.singleQuote:
			return i + 1
		case L.digitSep && i > 0 && isWordByte(s[i-1]):
			return i + 1
		case L.lifetimes && !isCharLiteral(s, i):
			return i + 1
		}
		return lx.openString(s, i, '\'', false, false)
	case '`':
		if L.backtick || L.fam == famShell {
			return lx.openString(s, i, '`', false, L.backtickRaw)
		}
	case '/':
		if L.regex {
			if j, ok := regexLiteral(s, i, li.last2); ok {
				return j
			}
		}
	case '$':
		if L.raw == '$' {
			if j := dollarTag(s, i); j > 0 {
				lx.rawEnd = s[i:j]
				return j
			}
		}
		if L.fam == famShell && i+1 < len(s) && s[i+1] == '{' {
			return skipBraces(s, i+1)
		}
	case '%':
		if L.percent {
			if j, ok := lx.openPercent(s, i, li.last2); ok {
				return j
			}
		}
	case '<':
		if L.heredoc && strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<") {
			return lx.heredocStart(s, i)
		}
	case '{', '(', '[':
		if L.fam != famShell {
			lx.depth++
		} else if c == '{' && (i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r') {
			lx.depth++
			lx.cmdPos = true
		}
		if L.fam == famShell && c == '(' {
			lx.cmdPos = true
		}
		return i + 1
	case '}', ')', ']':
		if L.fam != famShell {
			if lx.depth > 0 {
				lx.depth--
			}
		} else if c == '}' && (i == 0 || strings.ContainsRune(" \t;&", rune(s[i-1]))) && lx.depth > 0 {
			lx.depth--
		}
		return i + 1
	case ';', '&', '|':
		lx.cmdPos = true
		return i + 1
	}
	if L.fam == famShell && isWordStart(c) && (i == 0 || !isWordByte(s[i-1])) {
		j := i
		for j < len(s) && (isWordByte(s[j]) || s[j] == '-') {
			j++
		}
		lx.shellWord(s[i:j])
		return j
	}
	if isWordByte(c) {
		// Skip the rest of the word, noting its last byte.
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j-i > 1 {
			li.last2, li.last = s[j-2], s[j-1]
		}
		return j
	}
	return i + 1
}

// openPercent starts a percent literal at s[i] ('%'): %w[a b], %r{x},
// %q(...), or a bare %(...) or %{...} where an operand may stand (prev,
// the code character before, is no word, number or closing bracket: a %
// after one is the remainder operator). It reports false when none
// starts there.
func (lx *lexer) openPercent(s string, i int, prev byte) (int, bool) {
	k := i + 1
	typed := k < len(s) && strings.IndexByte("qQwWiIrsx", s[k]) >= 0
	if typed {
		k++
	}
	if k >= len(s) {
		return 0, false
	}
	open := s[k]
	var close byte
	switch open {
	case '(':
		close = ')'
	case '[':
		close = ']'
	case '{':
		close = '}'
	case '<':
		close = '>'
	case '|', '!', '/', '^', '~', '\'', '"':
		if !typed {
			return 0, false
		}
		close = open
	default:
		return 0, false
	}
	if !typed && (isWordByte(prev) || prev == ')' || prev == ']' || prev == '}') {
		return 0, false
	}
	lx.pctOpen, lx.pctClose, lx.pctDepth = open, close, 0
	return lx.scanPercent(s, k+1), true
}

// scanPercent advances through an open percent literal from s[i] and
// returns the index after it, or len(s) when it goes on past the line.
// Brackets of its own kind nest inside it ("#{x}" in %r{...}).
func (lx *lexer) scanPercent(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c == lx.pctClose && lx.pctDepth == 0:
			lx.pctOpen, lx.pctClose = 0, 0
			return i + 1
		case c == lx.pctClose:
			lx.pctDepth--
		case c == lx.pctOpen && lx.pctOpen != lx.pctClose:
			lx.pctDepth++
		}
		i++
	}
	return len(s)
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// shellWord tracks if/fi, case/esac and loop/done nesting in shell.
func (lx *lexer) shellWord(w string) {
	if lx.cmdPos {
		switch w {
		case "if", "case", "for", "while", "until", "select":
			lx.depth++
		case "fi", "esac", "done":
			if lx.depth > 0 {
				lx.depth--
			}
		}
	}
	switch w {
	case "then", "do", "else", "elif", "if", "while", "until", "time", "!":
		lx.cmdPos = true
	default:
		lx.cmdPos = false
	}
}

// rawString opens a raw string at the quote s[i] when its prefix says so.
func (lx *lexer) rawString(s string, i int) (int, bool) {
	switch lx.lang.raw {
	case 'r': // r"..." r#"..."# br"..."
		k := i
		for k > 0 && s[k-1] == '#' {
			k--
		}
		if k == 0 || s[k-1] != 'r' || k >= 2 && isWordByte(s[k-2]) && s[k-2] != 'b' {
			return 0, false
		}
		lx.rawEnd = "\"" + s[k:i]
		return i + 1, true
	case 'R': // R"delim(...)delim"
		if i == 0 || s[i-1] != 'R' {
			return 0, false
		}
		p := strings.IndexByte(s[i+1:], '(')
		if p < 0 || p > 16 {
			return 0, false
		}
		lx.rawEnd = ")" + s[i+1:i+1+p] + "\""
		return i + 2 + p, true
	case '@': // @"..." (also $@"..." and @$"...")
		if i > 0 && s[i-1] == '@' {
			return lx.openString(s, i, '"', false, true), true
		}
	}
	return 0, false
}

// isCharLiteral reports whether the quote at s[i] opens a Rust char
// literal ('a', '\n', '\u{1F600}') rather than a lifetime ('a).
func isCharLiteral(s string, i int) bool {
	if i+1 >= len(s) {
		return false
	}
	if s[i+1] == '\\' {
		return true
	}
	_, size := runeAt(s, i+1)
	return i+1+size < len(s) && s[i+1+size] == '\''
}

// regexLiteral skips a JS regular expression literal starting at s[i] when
// the character before it (prev) says one can start there.
func regexLiteral(s string, i int, prev byte) (int, bool) {
	if i+1 >= len(s) || s[i+1] == '/' || s[i+1] == '*' {
		return 0, false
	}
	if prev != 0 && !strings.ContainsRune("(,=:[!&|?{};+-*%<>~^", rune(prev)) {
		return 0, false
	}
	class := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// dollarTag returns the end of a SQL dollar-quote tag ($$ or $name$)
// starting at s[i], or 0.
func dollarTag(s string, i int) int {
	j := i + 1
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '$' && (j == i+1 || !isDigitByte(s[i+1])) {
		return j + 1
	}
	return 0
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// skipBraces skips a balanced ${...} on one line, from the '{' at s[i].
func skipBraces(s string, i int) int {
	n := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			n++
		case '}':
			n--
			if n == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// heredocStart reads "<<[-]['"]WORD['"]" at s[i] and queues the heredoc.
func (lx *lexer) heredocStart(s string, i int) int {
	j := i + 2
	tabs := false
	if j < len(s) && s[j] == '-' {
		tabs = true
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	quote := byte(0)
	if j < len(s) && (s[j] == '\'' || s[j] == '"') {
		quote = s[j]
		j++
	}
	k := j
	for k < len(s) && (isWordByte(s[k]) || s[k] == '-' || s[k] == '.') {
		k++
	}
	if k == j || !isWordStart(s[j]) && quote == 0 {
		return i + 2
	}
	lx.heredocs = append(lx.heredocs, heredocSpec{word: s[j:k], tabs: tabs})
	if quote != 0 && k < len(s) && s[k] == quote {
		k++
	}
	return k
}
