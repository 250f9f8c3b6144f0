package render

import (
	"encoding/json"
	"math"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// HitCost is what one hit costs in tokens, for one counter and one render
// format: the callers' cache of per-hit counts (DESIGN §6). Store it with
// the evidence of a cached result and hand it back in FitInput.Costs; Fit
// checks each count against a fingerprint of the exact fragment it stands
// for, so a stale or foreign cost only costs time, never exactness.
type HitCost struct {
	Counter string `json:"counter"`
	Format  Format `json:"format"`
	// JSONTokens counts the hit's structured fragment: its compact JSON
	// object without the opening `{"` and the closing `}` (with the text,
	// or without it under a render). JSONSum fingerprints that fragment.
	JSONTokens int    `json:"json_tokens"`
	JSONSum    uint64 `json:"json_sum"`
	// RenderedTokens counts the hit's whole block in Format (0 without a
	// render); RenderedSum fingerprints it.
	RenderedTokens int    `json:"rendered_tokens"`
	RenderedSum    uint64 `json:"rendered_sum"`
}

// parts are the strings a whole hit contributes to the answer.
type parts struct {
	core  string  // structured fragment (see HitCost.JSONTokens)
	block string  // rendered block ("" without a render)
	esc   string  // the block as it is spelled inside the JSON's "rendered"
	it    item    // the hit as the renderers see it
	cost  HitCost // fingerprints only: estimate copies it into f.costs with the counts
}

// partsOf builds the parts of h, whole: Truncated false, and no text in the
// structured fragment under a render.
func partsOf(f Format, h *query.Hit) (parts, error) {
	sh := *h
	sh.Truncated = IsBare(h)
	if f != FormatNone {
		sh = citationOf(sh)
	}
	core, err := coreOf(&sh)
	if err != nil {
		return parts{}, err
	}
	p := parts{core: core}
	if f != FormatNone {
		p.block = blockFor(f, newItem(h, IsBare(h)))
		p.esc = escapeJSON(p.block)
	}
	return p, nil
}

// citationOf is h as it travels under a render: a compact citation that
// does not repeat what the rendered text shows (query.Hit.MarshalJSON;
// docs/render.md, "Citations under a render"). It keeps only the fields
// that travel, so the fitted result is what its JSON says.
func citationOf(h query.Hit) query.Hit {
	c := query.Hit{EvidenceID: h.EvidenceID, File: h.File, Span: h.Span, Truncated: h.Truncated,
		Stale: h.Stale, StaleReason: h.StaleReason, Cited: true}
	if h.File == "" {
		c.SourceID, c.Path = h.SourceID, h.Path
	}
	return c
}

// escapeJSON is s as it is spelled inside a JSON string by json.Marshal
// (without the quotes). Escaping goes character by character, so the
// escape of a concatenation is the concatenation of the escapes.
func escapeJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return s // a string always marshals
	}
	return string(b[1 : len(b)-1])
}

// coreOf marshals h and strips the `{"` and `}` around it: the fragment of
// the hits array that counts on its own (segments.go, rules A and C).
// It calls Hit.MarshalJSON itself: json.Marshal would compact and escape
// its output a second time, which it already is (json.Marshal of the
// hit's fields), and that pass was about 3 % of the owner's CPU under
// bench/load.sh (TestCoreOfIsMarshal).
func coreOf(h *query.Hit) (string, error) {
	if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
		return "", workspace.Errorf(workspace.CodeInternal, "hit %s has a score that is not a finite number", h.EvidenceID)
	}
	b, err := h.MarshalJSON()
	if err != nil {
		return "", workspace.Wrap(workspace.CodeInternal, err, "encode hit")
	}
	return string(b[2 : len(b)-1]), nil
}

// fingerprint is 64-bit FNV-1a over s: stable across processes, so a cost
// may be persisted with the evidence.
func fingerprint(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
