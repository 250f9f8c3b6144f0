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

	// Candidate generation (stage A): the pool is at least poolMin
	// candidates (and 3 times the depth asked for), ranked by FTS5's bm25
	// over at most maxTermsA terms whose document frequencies sum to at
	// most rankBudget; see search_candidates.go.
	poolMin    int
	poolMax    int
	maxTermsA  int
	rankBudget int64
}

var profiles = []profile{
	{
		name:        "balanced",
		description: "Default. BM25F over title, headings, path, text and identifier parts, with term proximity and pseudo-relevance feedback; questions are matched by any of their words and ranked by all of them.",
		k1:          1.2,
		fields: [numFields]fieldParams{
			fieldTitle:   {weight: 1.0, b: 0.5},
			fieldHeading: {weight: 0.5, b: 0.5},
			fieldPath:    {weight: 0.5, b: 0.5},
			fieldBody:    {weight: 1.0, b: 0.75},
			fieldCode:    {weight: 0.5, b: 0.75},
		},
		proximity:    0.0,
		proxWindow:   8,
		phraseWeight: 1.0,
		prfDocs:      0,
		prfTerms:     0,
		prfWeight:    0.0,
		poolMin:      200,
		poolMax:      maxPoolSize,
		maxTermsA:    24,
		rankBudget:   8000,
	},
}

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
