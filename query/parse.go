package query

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
)

// Query syntax.
//
// A question is free text with optional "double-quoted phrases" (straight
// ASCII quotes only: curly quotes are prose punctuation). There are no
// operators: every character a user types is text, and the MATCH
// expression is built from tokens, each quoted, never from the raw text.
//
//   - A word is a term. Words are tokenized and stemmed exactly as the index
//     is (porter, unicode61, '_' kept inside words).
//   - An identifier (a compound that SplitIdentifier splits into two or
//     more parts: parseHTTPRequest, parse_http_request, HTTPServer,
//     os.ReadFile) matches as its whole form or as all of its parts:
//     "parse http request" finds parseHTTPRequest through the code_terms
//     column, and ParseHTTPRequest finds parse_http_request the same way;
//     the exact identifier ranks first, since its whole form and its
//     parts all count.
//   - A question of one word written with a capital (Pipe, Blueprint) is
//     a name too: its definition ranks first as an identifier's does.
//   - A "quoted phrase" matches only its words adjacent and in order. Its
//     words also weigh in the ranking of whatever matched, but alone they
//     match nothing: a question made of one phrase finds only the phrase.
//     A quote left unclosed is ignored (a stray quote must not turn the
//     rest of the question into one long phrase that matches nothing).
//   - Stop words ("the", "how", "is", ...) are dropped from the ranking
//     unless the question has nothing else; inside phrases they still have
//     to be there, and inside identifiers they are names like any other
//     part (errors.Is, ForEach).
//   - A Greek letter standing in Latin text is read as its name (IFN-γ
//     as IFN-gamma, αvβ8 as alphavbeta8; sources.NameGreek), its compound
//     named exactly as CodeTerms names it for the index: a text that
//     writes the name matches it, and so does one that writes the letter,
//     through the named form CodeTerms adds to its units. Greek text and
//     quoted phrases are read as written; a name keeps its letter for its
//     definition (Δt).
//   - A compound with a hyphen between two letters or more and a digit
//     (IL-6, UTF-8) also adds its joined form (il6, utf8;
//     sources.JoinLetterDigit) as a word: a text that joins them matches
//     it, and one that hyphenates them matches the compound as written
//     and the joined form through CodeTerms.
//   - Words and phrases are alternatives (OR semantics): a hit matches at
//     least one of them, and ranking decides the rest.

// Term kinds.
const (
	termWord  = iota // a plain word of the question
	termPart         // a part of an identifier
	termWhole        // an identifier's whole form (as the index tokenizes it)
)

// qterm is one distinct query term (by stem).
type qterm struct {
	token  string  // folded, unstemmed form, quoted into MATCH
	stem   string  // as the index stores it
	weight float64 // query weight: occurrences in the question, by kind
	kind   int
	stop   bool // a stop word: not scored unless the query has nothing else
	name   bool // a part of an identifier: never a stop word
	free   bool // appears outside phrases: the term alone makes a match
	phrase bool // appears in a quoted phrase
	order  int  // first position in the question, for proximity pairs
}

// qphrase is a phrase: tokens that must be adjacent and in order. A
// quoted phrase is a clause of its own; the whole form of an identifier
// is a phrase only inside its identifier's clause.
type qphrase struct {
	tokens []string // folded, unstemmed
	terms  []int    // index into parsedQuery.terms for each token
	quoted bool
	// qualified: the whole form of a qualified name (pkg.Name), which
	// also matches its definition (see rank.go).
	qualified bool
}

// parsedQuery is a question turned into terms and phrases.
// qgroup is an identifier of the question: it matches as its whole form
// (the tokens the index makes of it) or as all its parts.
type qgroup struct {
	whole  []int // term indices, in order
	parts  []int // term indices
	phrase int   // index of the whole form's phrase (several tokens), or -1
}

type parsedQuery struct {
	terms   []qterm
	phrases []qphrase
	groups  []qgroup
	// seq is the question's scoring terms in order (indices into terms),
	// stop words left out: adjacent entries form the proximity pairs.
	seq []int
	// names are the identifiers the question names, whose definitions
	// rank first (rank_file.go).
	names []qname
	// forTests: the question names tests as a purpose ("an in-memory
	// file system for tests", "a mock client used in unit tests"): it
	// asks for the code that serves tests as much as for the tests
	// (testPurpose, rolesAsked).
	forTests bool
	// spelled are the names the question spells in plain words
	// (spelledNames); their definitions gain less than those of names
	// written as such (rank_file.go).
	spelled []qname
}

// qname is an identifier of the question as a definition would declare
// it: its name as the index tokenizes it ("parseip", "parse_qs", "mutex"
// of sync.Mutex) and the words that qualify it ("sync"; "net", "http" of
// net/http.Server), folded.
type qname struct {
	name      string
	qualifier []string
	// raw is the name as the question writes it when that holds an
	// upper-case letter (ReadByte, Mutex of sync.Mutex): a definition
	// that spells it so is the one asked for (definesName). "" when the
	// question gives no case.
	raw string
}

// Query-side weights of identifier terms, relative to a plain word (1):
// each part and the whole form count as a word, so an identifier weighs
// more than any single word of the question, and a unit holding it exactly
// (whole form and parts, through code_terms) ranks above one with only
// its parts.
const (
	weightPart  = 1.0
	weightWhole = 1.0
	// weightFoundPart scales a part's weight when the index holds its
	// identifier as written (foundParts).
	weightFoundPart = 0.5
)

// parseQuestion turns a question into terms and phrases. It never fails:
// a question with no token yields an empty query (no hits).
func parseQuestion(q string) parsedQuery {
	qp := &questionParser{index: map[string]int{}}
	var comps []string
	for _, seg := range splitQuoted(q) {
		if seg.quoted {
			qp.words = append(qp.words, "")
			qp.quoted(seg.text)
			comps = append(comps, "")
			continue
		}
		prevWord := ""
		origs := sources.Compounds(seg.text)
		named := origs
		if text := sources.NameGreek(seg.text); text != seg.text {
			// Naming replaces letters with letters: the compounds stay
			// the same in number and order (FuzzNameGreek).
			if n := sources.Compounds(text); len(n) == len(origs) {
				named = n
			}
		}
		for k, comp := range named {
			prevWord = qp.compound(comp, origs[k], prevWord)
			comps = append(comps, origs[k])
			if j := sources.JoinLetterDigit(comp); j != comp {
				qp.joined(comp, j)
			}
		}
	}
	if len(comps) == 1 {
		qp.capitalized(comps[0])
	}
	qp.finish()
	qp.pq.forTests = testPurpose(q)
	qp.pq.spelled = spelledNames(qp.words)
	return qp.pq
}

// spelledWords and spelledWordsMax bound how many adjacent plain words
// spell a name: three ("get the current context" spells
// get_current_context) or four ("canonical MIME header key" spells
// CanonicalMIMEHeaderKey). Two spell the names of too many definitions
// ("JSON schema", "request context", "text reader"; bench/README.md,
// "Names spelled in words").
const (
	spelledWords    = 3
	spelledWordsMax = 4
)

// spelledNames are the names that spelledWords to spelledWordsMax
// adjacent plain words of a question (stop words between them left out;
// an identifier or a quoted phrase breaks them) spell as a definition
// would declare them, folded: joined (getcurrentcontext, as the index
// folds GetCurrentContext and getCurrentContext) and with underscores
// (get_current_context).
func spelledNames(words []string) []qname {
	var out []qname
	for i := range words {
		for n := spelledWords; n <= spelledWordsMax && i+n <= len(words); n++ {
			run := words[i : i+n]
			if slices.Contains(run, "") {
				break
			}
			out = append(out, qname{name: strings.Join(run, "")}, qname{name: strings.Join(run, "_")})
		}
	}
	return out
}

// purposeWords come before a test word that names tests as a purpose
// ("for tests", "in unit tests", "during testing"); fillerWords may stand
// between.
var (
	purposeWords = map[string]bool{"for": true, "in": true, "during": true, "within": true, "inside": true, "by": true}
	fillerWords  = map[string]bool{"the": true, "a": true, "an": true, "each": true, "every": true, "our": true,
		"my": true, "your": true, "its": true, "their": true,
		"unit": true, "integration": true, "e2e": true, "automated": true, "end-to-end": true}
)

// testThings are the nouns that "test" or "testing" before them makes a
// kind of test, not a thing that serves tests: "test cases", "test
// coverage" ask for tests (testPurpose).
var testThings = map[string]bool{
	"case": true, "cases": true, "suite": true, "suites": true, "file": true, "files": true,
	"function": true, "functions": true, "func": true, "funcs": true, "method": true, "methods": true,
	"coverage": true, "run": true, "runs": true, "result": true, "results": true, "failure": true,
	"failures": true, "fails": true, "failing": true, "code": true, "data": true, "table": true,
	"tables": true, "name": true, "names": true,
}

// testPurpose reports whether q names tests as a purpose: a test word
// (test, tests, testing, unittest, spec, specs) after a purpose word ("an
// in-memory file system for tests"), or "test" or "testing" before the
// plain noun of a thing ("start a test HTTP server", "testing
// utilities"): such a thing serves tests, and is mostly not a test
// itself. A name after it ("test ParseIP"), a stop word ("test the
// parser") or a noun that makes a kind of test (testThings: "test
// cases") leaves the question asking for tests, unless that one is
// singular and a plain noun follows ("a test file system", "a test case
// generator"; not "test cases pass").
func testPurpose(q string) bool {
	raw := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	})
	ws := make([]string, len(raw))
	for i, w := range raw {
		ws[i] = strings.ToLower(w)
	}
	for i, w := range ws {
		if roleWords[w] != "test" {
			continue
		}
		j := i - 1
		for j >= 0 && fillerWords[ws[j]] {
			j--
		}
		if j >= 0 && purposeWords[ws[j]] {
			return true
		}
		if (w == "test" || w == "testing") && i+1 < len(ws) && (thingWord(raw[i+1]) ||
			testThings[ws[i+1]] && !strings.HasSuffix(ws[i+1], "s") && i+2 < len(ws) && thingWord(raw[i+2])) {
			return true
		}
	}
	return false
}

// thingWord reports whether w, as the question writes it, is a plain
// noun that "test" can modify: letters only, lower case or an acronym
// (HTTP), not a stop word, a role word or one of testThings. A word in
// mixed case or with digits or underscores is a name.
func thingWord(w string) bool {
	lower := strings.ToLower(w)
	if isStopword(lower) || testThings[lower] || roleWords[lower] != "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return lower == w || strings.ToUpper(w) == w
}

// questionParser holds parseQuestion's state.
type questionParser struct {
	pq        parsedQuery
	index     map[string]int // stem → its term
	buf, sbuf []byte
	pos       int // tokens added so far: the next term's order
	// words are the plain words outside quotes in order, stop words left
	// out, "" where an identifier or a quoted phrase stands
	// (spelledNames).
	words []string
}

// add counts one token of the question: its term (by stem, made on first
// sight) gains weight and the flags given; it returns the term's index.
func (qp *questionParser) add(tok []byte, kind int, weight float64, free, inPhrase bool) int {
	qp.sbuf = append(qp.sbuf[:0], tok...)
	stem := string(sources.PorterStem(qp.sbuf))
	i, ok := qp.index[stem]
	if !ok {
		i = len(qp.pq.terms)
		qp.index[stem] = i
		qp.pq.terms = append(qp.pq.terms, qterm{token: string(tok), stem: stem, kind: kind, order: qp.pos,
			stop: isStopword(string(tok))})
	}
	t := &qp.pq.terms[i]
	t.weight += weight
	if kind < t.kind {
		t.kind = kind
	}
	t.phrase = t.phrase || inPhrase
	t.free = t.free || free
	qp.pos++
	return i
}

// tokens is the index's tokens of s.
func (qp *questionParser) tokens(s string) []string {
	var out []string
	qp.buf = sources.ForEachToken(s, qp.buf, func(tok []byte, _, _ int) bool {
		out = append(out, string(tok))
		return true
	})
	return out
}

// quoted adds a quoted phrase: its words must match adjacent.
func (qp *questionParser) quoted(text string) {
	ph := qphrase{quoted: true}
	for _, tok := range qp.tokens(text) {
		ph.tokens = append(ph.tokens, tok)
		ph.terms = append(ph.terms, qp.add([]byte(tok), termWord, 1, false, true))
	}
	if len(ph.tokens) == 0 {
		return
	}
	qp.pq.phrases = append(qp.pq.phrases, ph)
	for _, t := range ph.terms {
		if !qp.pq.terms[t].stop {
			qp.pq.seq = append(qp.pq.seq, t)
		}
	}
}

// compound adds one compound of the question outside quotes (a word, an
// identifier, a qualified name), with its Greek letters named; orig is
// the compound as the question writes it, the name a definition declares
// (Δt); prevWord is the word before it, if it was one word, and compound
// returns the same for the next.
func (qp *questionParser) compound(comp, orig, prevWord string) string {
	whole := qp.tokens(comp)
	if len(whole) == 0 {
		return prevWord
	}
	var parts []string
	for _, p := range sources.SplitIdentifier(comp) {
		parts = append(parts, qp.tokens(p)...)
	}
	// A name is one token to the index (ParseIP, parse_qs), or a
	// qualified one (sync.Mutex, std::vector); a hyphenated compound
	// (If-Modified-Since, IL-10) is prose, not a declared name.
	qualified := strings.Contains(comp, ".") || strings.Contains(comp, "::")
	if (len(parts) >= 2 && (len(whole) == 1 || qualified)) || (declKeyword(prevWord) && len(whole) == 1 && !isStopword(whole[0])) {
		if orig != comp {
			qp.pq.names = appendName(qp.pq.names, qp.tokens(orig), rawName(orig))
		} else {
			qp.pq.names = appendName(qp.pq.names, whole, rawName(comp))
		}
	}
	next := ""
	if len(whole) == 1 {
		next = whole[0]
	}
	if len(parts) < 2 {
		for _, w := range whole {
			i := qp.add([]byte(w), termWord, 1, true, false)
			if !qp.pq.terms[i].stop {
				qp.pq.seq = append(qp.pq.seq, i)
				qp.words = append(qp.words, w)
			}
		}
		return next
	}
	qp.words = append(qp.words, "")
	qp.identifier(whole, parts, qualified)
	return next
}

// joined adds the tokens of the joined form of comp (IL-6: il6) that comp
// itself lacks, as words.
func (qp *questionParser) joined(comp, joined string) {
	own := qp.tokens(comp)
	for _, w := range qp.tokens(joined) {
		if containsString(own, w) {
			continue
		}
		i := qp.add([]byte(w), termWord, 1, true, false)
		if !qp.pq.terms[i].stop {
			qp.pq.seq = append(qp.pq.seq, i)
		}
	}
}

// identifier adds an identifier: its parts, its whole form, and the whole
// form as a phrase when the index makes several tokens of it (os.ReadFile:
// "os readfile"). Parts are names: none of them is a stop word
// ("errors.Is", "ForEach"); their idf weighs them.
func (qp *questionParser) identifier(whole, parts []string, qualified bool) {
	var g qgroup
	for _, p := range parts {
		i := qp.add([]byte(p), termPart, weightPart, false, false)
		qp.pq.terms[i].name = true
		qp.pq.seq = append(qp.pq.seq, i)
		if !slices.Contains(g.parts, i) {
			g.parts = append(g.parts, i)
		}
	}
	var ph qphrase
	for _, w := range whole {
		var i int
		if containsString(parts, w) {
			i = qp.add([]byte(w), termPart, 0, false, len(whole) > 1)
		} else {
			i = qp.add([]byte(w), termWhole, weightWhole, false, len(whole) > 1)
		}
		g.whole = append(g.whole, i)
		ph.tokens = append(ph.tokens, w)
		ph.terms = append(ph.terms, i)
	}
	g.phrase = -1
	if len(whole) > 1 {
		// A qualified name (os.ReadFile, std::vector) is also found where
		// it is defined: its qualifier in the path, its name in the title.
		ph.qualified = qualified
		g.phrase = len(qp.pq.phrases)
		qp.pq.phrases = append(qp.pq.phrases, ph)
	}
	qp.pq.groups = append(qp.pq.groups, g)
}

// finish clears the stop flag of names, and makes a question of stop
// words only (and no phrase or identifier) search for them.
func (qp *questionParser) finish() {
	pq := &qp.pq
	for i := range pq.terms {
		if pq.terms[i].name {
			pq.terms[i].stop = false
		}
	}
	if len(pq.phrases) != 0 || len(pq.groups) != 0 || len(pq.terms) == 0 {
		return
	}
	for _, t := range pq.terms {
		if !t.stop {
			return
		}
	}
	pq.seq = pq.seq[:0]
	for i := range pq.terms {
		pq.terms[i].stop = false
		pq.terms[i].free = true
		pq.seq = append(pq.seq, i)
	}
}

// segment is a run of the question inside or outside double quotes.
type segment struct {
	text   string
	quoted bool
}

// splitQuoted cuts q at straight double quotes. A quote left unclosed (the
// last of an odd number) is no delimiter: what follows it stays free words.
func splitQuoted(q string) []segment {
	var out []segment
	quoted := false
	start := 0
	last := len(q) // the index of an unclosed quote, else len(q)
	if n := strings.Count(q, `"`); n%2 == 1 {
		last = strings.LastIndexByte(q, '"')
	}
	for i := 0; i < len(q); i++ {
		if q[i] == '"' && i != last {
			if i > start {
				out = append(out, segment{q[start:i], quoted})
			}
			quoted = !quoted
			start = i + 1
		}
	}
	if start < len(q) {
		out = append(out, segment{q[start:], quoted})
	}
	return out
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// clause reports whether term i alone makes a match: a free, non-stop
// term.
func (pq *parsedQuery) clause(i int) bool { return pq.terms[i].free && !pq.terms[i].stop }

// empty reports whether the query can match nothing.
func (pq *parsedQuery) empty() bool {
	if len(pq.phrases) > 0 || len(pq.groups) > 0 {
		return false
	}
	for i := range pq.terms {
		if pq.clause(i) {
			return false
		}
	}
	return true
}

// ftsString quotes one token or phrase for an FTS5 MATCH expression.
func ftsString(tokens ...string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, t := range tokens {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
	}
	b.WriteByte('"')
	return b.String()
}

// appendName adds the name an identifier's whole tokens declare (the last
// one) and its qualifier (the others), once.
func appendName(names []qname, whole []string, raw string) []qname {
	n := qname{name: whole[len(whole)-1], qualifier: slices.Clone(whole[:len(whole)-1])}
	if strings.ToLower(raw) == n.name && raw != n.name {
		n.raw = raw
	}
	for _, o := range names {
		if o.name == n.name && slices.Equal(o.qualifier, n.qualifier) {
			return names
		}
	}
	return append(names, n)
}

// rawName is the last name of a compound as written: Mutex of
// sync.Mutex, vector of std::vector, ReadByte.
func rawName(comp string) string {
	if i := strings.LastIndex(comp, "::"); i >= 0 {
		comp = comp[i+2:]
	}
	if i := strings.LastIndexAny(comp, "./#"); i >= 0 {
		comp = comp[i+1:]
	}
	return comp
}

// capitalized makes a question of one word written with a capital
// ("Pipe", "Blueprint", "EOF") a name: alone, and so written, it is how
// a definition is asked for (an exported Go name, a class), and its
// definition comes first as an identifier's does. A word in lower case
// stays a word.
func (qp *questionParser) capitalized(comp string) {
	if len(qp.pq.names) > 0 || len(qp.pq.terms) != 1 {
		return
	}
	r, _ := utf8.DecodeRuneInString(comp)
	t := &qp.pq.terms[0]
	if !unicode.IsUpper(r) || t.kind != termWord || isStopword(t.token) || roleWords[t.token] != "" {
		return
	}
	t.name = true
	name := t.token // comp's one token, or its Greek letters named (Δt: deltat)
	if toks := qp.tokens(comp); len(toks) == 1 {
		name = toks[0] // as a definition declares it (δt)
	}
	qp.pq.names = appendName(qp.pq.names, []string{name}, comp)
}

// declKeyword reports whether a folded word of a question introduces a
// declaration's name ("func ReadRequest", "class Parser", "def main"): the
// word after it is a name even when it does not split into parts. Words
// that prose uses as often ("type", "interface", "struct") are not.
func declKeyword(w string) bool {
	switch w {
	case "func", "function", "fn", "fun", "def", "class", "defmodule", "typedef", "impl", "trait":
		return true
	}
	return false
}
