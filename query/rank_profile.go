package query

import "slices"

// DefaultProfile is the profile of a request that names none.
const DefaultProfile = "balanced"

// maxPoolSize is the deepest rank a search reaches (paging ends there).
const maxPoolSize = 1000

// ProfileInfo describes a ranking profile for discover profiles.
type ProfileInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// fieldParams weight one column in BM25F: its term frequencies count
// weight times, normalized by its own length with strength b.
type fieldParams struct {
	weight float64
	b      float64
}

// profile is a set of ranking parameters. docs/search.md explains each one
// and the evaluation behind its value.
type profile struct {
	name        string
	description string

	// BM25F.
	k1     float64
	fields [numFields]fieldParams

	// Proximity: pairs of consecutive query terms close together in the
	// body add min(idf) * sat(acc) * proximity, acc summing 1/d^2 over
	// occurrences at most proxWindow tokens apart.
	proximity  float64
	proxWindow int

	// Phrases: each occurrence of a quoted phrase counts as a term of the
	// phrase's highest idf, weighted phraseWeight.
	phraseWeight float64

	// Pseudo-relevance feedback (RM3): the prfDocs best candidates give
	// prfTerms expansion terms, weighted prfWeight against the question;
	// 0 prfDocs turns it off.
	prfDocs   int
	prfTerms  int
	prfWeight float64

	// Candidate generation (stage A, search_candidates.go): the pool
	// holds poolFactor × limit candidates, at least poolMin and at most
	// poolMax; an OR of all terms is ranked by FTS5's bm25 when it ranks at
	// most cheapRows rows; otherwise conjunctive probes run first and the
	// OR is pruned to at most maxTermsA terms ranking at most rankBudget
	// rows (fillBudget after conjunctive probes).
	poolMin    int
	poolFactor int
	poolMax    int
	maxTermsA  int
	cheapRows  int64
	rankBudget int64
	fillBudget int64
	// looseParts makes every part of an identifier a clause of its own
	// (besides the identifier): a unit with any part matches.
	looseParts bool
}

// balanced is the default profile; the others start from it.
var balanced = profile{
	name:        "balanced",
	description: "Default: BM25F over title, headings, path, text and identifier parts, with a bonus for query words close together; words of a question are alternatives, ranked by all of them; identifiers match whole or by parts; quoted phrases match adjacent words only.",
	k1:          1.2,
	fields: [numFields]fieldParams{
		fieldTitle:   {weight: 2.0, b: 0.5},
		fieldHeading: {weight: 0.5, b: 0.5},
		fieldPath:    {weight: 0.5, b: 0.5},
		fieldBody:    {weight: 1.0, b: 0.75},
		fieldCode:    {weight: 0.5, b: 0.75},
	},
	proximity:    0.5,
	proxWindow:   8,
	phraseWeight: 1.0,
	poolMin:      50,
	poolFactor:   5,
	poolMax:      maxPoolSize,
	maxTermsA:    24,
	cheapRows:    1000,
	rankBudget:   10000,
	fillBudget:   1000,
}

var profiles = func() []profile {
	precise := balanced
	precise.name = "precise"
	precise.description = "Like balanced, with twice the weight for query words that occur close together and for phrases: for keyword queries whose words belong together."
	precise.proximity = 1
	precise.phraseWeight = 2

	recall := balanced
	recall.name = "recall"
	recall.description = "Like balanced, plus pseudo-relevance feedback (RM3: words of the best first results expand the query) over a larger pool: finds more of what is relevant, at some cost in precision and time."
	recall.prfDocs, recall.prfTerms, recall.prfWeight = 10, 20, 0.3
	recall.poolMin, recall.poolFactor = 100, 8
	recall.cheapRows, recall.fillBudget = 20000, balanced.rankBudget
	recall.looseParts = true

	code := balanced
	code.name = "code"
	code.description = "For source code: declaration names (title), enclosing declarations and paths weigh more, identifier parts count as much as words, and nearby query words get a bonus."
	code.fields[fieldTitle].weight = 3
	code.fields[fieldHeading].weight = 1
	code.fields[fieldPath].weight = 1
	code.fields[fieldCode].weight = 1
	return []profile{balanced, precise, recall, code}
}()

func profileByName(name string) (*profile, bool) {
	for i := range profiles {
		if profiles[i].name == name {
			return &profiles[i], true
		}
	}
	return nil, false
}

func profileNames() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.name
	}
	return out
}

// Profiles lists the ranking profiles, the default first (discover
// profiles).
func Profiles() []ProfileInfo {
	out := make([]ProfileInfo, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, ProfileInfo{Name: p.name, Description: p.description, Default: p.name == DefaultProfile})
	}
	slices.SortStableFunc(out, func(a, b ProfileInfo) int {
		switch {
		case a.Default == b.Default:
			return 0
		case a.Default:
			return -1
		}
		return 1
	})
	return out
}
