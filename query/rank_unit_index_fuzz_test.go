package query

import (
	"testing"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
)

// FuzzUnitCounts: the unit index counts a unit's title (with its
// identifiers' parts), text and code terms as the file terms kept at
// ingest count them (sources.FileTerms, which TestKeptFileTermsMatchScorer
// ties to the scorer), stem for stem, whatever the text.
func FuzzUnitCounts(f *testing.F) {
	f.Add("func (s *Server) ParseHTTPRequest", "ParseIP parses addresses; parsing twice.", "parse http request", "Server")
	f.Add("class HTTPServerConfig(BaseServer)", "Nguy\u1ec5n met \u0218tefan", "http server config", "")
	f.Add("os.ReadFile", "x := os.ReadFile(name) // read_file", "os read file", "Install\nFrom source")
	f.Fuzz(func(t *testing.T, title, text, code, heading string) {
		if !utf8.ValidString(title) || !utf8.ValidString(text) || !utf8.ValidString(code) || !utf8.ValidString(heading) {
			return
		}
		c := &candidate{title: title, text: text, codeTerms: code, context: heading}
		uc := newUnitCounter()
		lens := uc.count(c)
		got := map[uint64][4]uint32{}
		for i, st := range uc.order {
			got[uc.hashes[st]] = uc.cnt[i]
		}
		want := map[uint64][3]uint32{}
		sources.EachTerm(sources.FileTerms([]sources.LeafText{{Title: title, Text: text, CodeTerms: code}}), func(stem []byte, tc sources.TermCounts) bool {
			want[stemHash(stem)] = [3]uint32{tc.Title, tc.Text, tc.Code}
			return true
		})
		for h, w := range want {
			g := got[h]
			if g[ucTitle] != w[0] || g[ucBody] != w[1] || g[ucCode] != w[2] {
				t.Fatalf("stem %x: unit counts %v, file terms %v", h, g, w)
			}
		}
		for h, g := range got {
			if _, ok := want[h]; !ok && (g[ucTitle] > 0 || g[ucBody] > 0 || g[ucCode] > 0) {
				t.Fatalf("stem %x: unit counts %v, none in the file terms", h, g)
			}
		}
		m := newMatcher(nil)
		if _, n := m.scan(title, nil); int(lens[ucTitle]) != n+m.extraParts(title) {
			t.Fatalf("title length %d, the scorer's %d", lens[ucTitle], n+m.extraParts(title))
		}
		for col, s := range map[int]string{ucHeading: heading, ucBody: text, ucCode: code} {
			if _, n := m.scan(s, nil); int(lens[col]) != n {
				t.Fatalf("column %d: length %d, the scorer's %d", col, lens[col], n)
			}
		}
	})
}
