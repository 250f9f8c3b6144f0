package query

import "encoding/json"

// citation is a hit as it travels under a render: what the rendered text
// cannot show, and where the file is. The rendered header already shows
// the file, the lines shown and the unit's span, and the text; a citation
// keeps the id to follow (inspect, tychora://evidence/{id}), the file an
// agent opens (inspect content takes it as file), the unit's span and
// the flags. source_id and path travel only when the file's place on
// disk is not known. score, excerpt, kind, title, heading path, revision,
// snippet, text and hash stay reachable through inspect and
// tychora://evidence/{id}, and the run record keeps the scores.
type citation struct {
	EvidenceID  string  `json:"evidence_id"`
	SourceID    string  `json:"source_id,omitempty"`
	Path        string  `json:"path,omitempty"`
	File        string  `json:"file,omitempty"`
	Span        Span    `json:"span"`
	Truncated   bool    `json:"truncated,omitempty"`
	StaleReason *string `json:"stale_reason,omitempty"`
	// Stale comes last: a citation then ends in a letter ("true",
	// "false"), where its count splits from what follows (render's
	// segments.go, rule C).
	Stale bool `json:"stale"`
}

// MarshalJSON encodes h whole, or as a compact citation when h.Cited.
// A citation's source_id and path travel only when its file does not.
func (h Hit) MarshalJSON() ([]byte, error) {
	if !h.Cited {
		type plain Hit
		return json.Marshal(plain(h))
	}
	c := citation{EvidenceID: h.EvidenceID, File: h.File, Span: h.Span,
		Truncated: h.Truncated, Stale: h.Stale, StaleReason: h.StaleReason}
	if h.File == "" {
		c.SourceID, c.Path = h.SourceID, h.Path
	}
	return json.Marshal(c)
}

// UnmarshalJSON decodes a whole hit or a citation: a hit without "score"
// is a citation (every whole hit has one).
func (h *Hit) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // as encoding/json leaves a value it decodes null into
	}
	type plain Hit
	var probe struct {
		Score *float64 `json:"score"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*h = Hit(p)
	h.Cited = probe.Score == nil
	return nil
}
