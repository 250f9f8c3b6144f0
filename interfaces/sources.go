package interfaces

import "github.com/tychora/tychora/sources"

// Actions of add_sources.
const (
	SourceActionAdd  = "add"
	SourceActionSync = "sync"
)

// SourceInput is what add_sources adds (DESIGN §3).
type SourceInput = sources.SourceInput

// AddSourcesRequest is the argument object of add_sources and the body of
// POST /v1/add_sources: {"action":"add","source":{...}} or
// {"action":"sync","source_id":"..."}.
type AddSourcesRequest struct {
	Action   string       `json:"action" jsonschema:"add or sync"`
	Source   *SourceInput `json:"source,omitempty" jsonschema:"the source to add (action add)"`
	SourceID string       `json:"source_id,omitempty" jsonschema:"the source to sync (action sync)"`
}
