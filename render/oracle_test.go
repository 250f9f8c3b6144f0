package render

import (
	"strings"

	"github.com/tychora/tychora/query"
)

// What a fit must agree with, computed on its own from one hit or a list
// of hits.

// hitCostOf computes the cost of h, whole, for the named counter ("" is the
// default) and format.
func hitCostOf(counter string, f Format, h query.Hit) (HitCost, error) {
	c, err := CounterFor(counter)
	if err != nil {
		return HitCost{}, err
	}
	if _, err := ParseFormat(string(f)); err != nil {
		return HitCost{}, err
	}
	p, err := partsOf(f, &h)
	if err != nil {
		return HitCost{}, err
	}
	return HitCost{
		Counter:        c.name,
		Format:         f,
		JSONTokens:     c.Count(p.core),
		JSONSum:        fingerprint(p.core),
		RenderedTokens: c.Count(p.block),
		RenderedSum:    fingerprint(p.block),
	}, nil
}

// renderHits renders hits as they are (their Text, cut or whole, and their
// Truncated flags) in format f. It is what Fit puts in FitOutput.Rendered
// for the hits it keeps; "" for FormatNone.
func renderHits(f Format, hits []query.Hit) string {
	if f == FormatNone {
		return ""
	}
	items := make([]item, len(hits))
	for i := range hits {
		items[i] = newItem(&hits[i], hits[i].Truncated)
	}
	return strings.Join(renderSegments(f, items, nil, true), "")
}
