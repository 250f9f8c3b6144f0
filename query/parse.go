package query

import (
	"strings"

	"github.com/tychora/tychora/sources"
)

// Query syntax.
//
// A question is free text with optional "double-quoted phrases". There are
// no operators: every character a user types is text, and the MATCH
// expression is built from tokens, each quoted, never from the raw text.
//
//   - A word is a term. Words are tokenized and stemmed exactly as the index
//     is (porter, unicode61, '_' kept inside words).
//   - An identifier (a compound that SplitIdentifier splits into two or
//     more parts: parseHTTPRequest, parse_http_request, HTTPServer,
//     os.ReadFile) is its parts plus its whole form: "parse http request"
//     finds parseHTTPRequest through the code_terms column, and
//     ParseHTTPRequest finds parse_http_request the same way, while the
//     exact identifier ranks first.
//   - "a quoted phrase" must appear with its words adjacent and in order (a
//     hit always contains every phrase); its words also count as terms.
//     An unclosed quote runs to the end of the question.
//   - Stop words ("the", "how", "is", ...) are dropped from free text unless
//     the question has nothing else; inside phrases they stay.
//   - Other words are optional (OR semantics): a hit matches at least one;
//     ranking decides the rest.

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
	phrase bool // appears in a quoted phrase
	order  int  // first position in the question, for proximity pairs
}

// qphrase is a quoted phrase: tokens that must be adjacent and in order.
type qphrase struct {
	tokens []string // folded, unstemmed
	terms  []int    // index into parsedQuery.terms for each token
}

// parsedQuery is a question turned into terms and phrases.
type parsedQuery struct {
	terms   []qterm
	phrases []qphrase
	// seq is the question's scoring terms in order (indices into terms),
	// stop words left out: adjacent entries form the proximity pairs.
	seq []int
}

// Query-side weights of identifier terms, relative to a plain word (1).
const (
	weightPart  = 1.0
	weightWhole = 1.0
)

// parseQuestion turns a question into terms and phrases. It never fails:
// a question with no token yields an empty query (no hits).
func parseQuestion(q string) parsedQuery {
	var pq parsedQuery
	index := map[string]int{}
	var buf, sbuf []byte
	pos := 0
	add := func(tok []byte, kind int, weight float64, inPhrase bool) int {
		sbuf = append(sbuf[:0], tok...)
		stem := string(porterStem(sbuf))
		i, ok := index[stem]
		if !ok {
			i = len(pq.terms)
			index[stem] = i
			pq.terms = append(pq.terms, qterm{token: string(tok), stem: stem, kind: kind, order: pos,
				stop: !inPhrase && isStopword(string(tok))})
		}
		t := &pq.terms[i]
		t.weight += weight
		if kind < t.kind {
			t.kind = kind
		}
		if inPhrase {
			t.phrase = true
			t.stop = false
		}
		pos++
		return i
	}
	for _, seg := range splitQuoted(q) {
		if seg.quoted {
			var ph qphrase
			buf = forEachToken(seg.text, buf, func(tok []byte, _, _ int) bool {
				ph.tokens = append(ph.tokens, string(tok))
				ph.terms = append(ph.terms, add(tok, termWord, 1, true))
				return true
			})
			if len(ph.tokens) > 0 {
				pq.phrases = append(pq.phrases, ph)
				pq.seq = append(pq.seq, ph.terms...)
			}
			continue
		}
		for _, chunk := range strings.Fields(seg.text) {
			var whole []string
			buf = forEachToken(chunk, buf, func(tok []byte, _, _ int) bool {
				whole = append(whole, string(tok))
				return true
			})
			if len(whole) == 0 {
				continue
			}
			var parts []string
			for _, p := range sources.SplitIdentifier(chunk) {
				buf = forEachToken(p, buf, func(tok []byte, _, _ int) bool {
					parts = append(parts, string(tok))
					return true
				})
			}
			if equalStrings(whole, parts) || len(parts) == 0 {
				for _, w := range whole {
					i := add([]byte(w), termWord, 1, false)
					if !pq.terms[i].stop {
						pq.seq = append(pq.seq, i)
					}
				}
				continue
			}
			for _, p := range parts {
				i := add([]byte(p), termPart, weightPart, false)
				if !pq.terms[i].stop {
					pq.seq = append(pq.seq, i)
				}
			}
			for _, w := range whole {
				if !containsString(parts, w) {
					add([]byte(w), termWhole, weightWhole, false)
				}
			}
		}
	}
	// A question made only of stop words searches for them.
	allStop := len(pq.terms) > 0
	for _, t := range pq.terms {
		if !t.stop {
			allStop = false
			break
		}
	}
	if allStop {
		for i := range pq.terms {
			pq.terms[i].stop = false
			pq.seq = append(pq.seq, i)
		}
	}
	return pq
}

// segment is a run of the question inside or outside double quotes.
type segment struct {
	text   string
	quoted bool
}

// splitQuoted cuts q at double quotes (straight or curly).
func splitQuoted(q string) []segment {
	var out []segment
	quoted := false
	start := 0
	for i, r := range q {
		if r == '"' || r == '\u201c' || r == '\u201d' {
			if i > start {
				out = append(out, segment{q[start:i], quoted})
			}
			quoted = !quoted
			start = i + len(string(r))
		}
	}
	if start < len(q) {
		out = append(out, segment{q[start:], quoted})
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// scoring reports whether term i takes part in ranking.
func (pq *parsedQuery) scoring(i int) bool { return !pq.terms[i].stop }

// empty reports whether the query can match nothing.
func (pq *parsedQuery) empty() bool {
	if len(pq.phrases) > 0 {
		return false
	}
	for i := range pq.terms {
		if pq.scoring(i) {
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
