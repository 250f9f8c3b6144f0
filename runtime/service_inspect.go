package runtime

import (
	"context"
	"encoding/json"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// Inspect answers about one source of the caller's collections; subject
// content is fitted to its budget by render.ContentFit, over the
// workspace's default budget.
func (s *Local) Inspect(ctx context.Context, args interfaces.InspectArgs) (interfaces.InspectResult, error) {
	p, err := caller(ctx, interfaces.ToolGrant(interfaces.ToolInspect))
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	r := args.Request
	cfg := s.owner.Settings()
	res, err := s.owner.inspector.Inspect(ctx, p, query.InspectRequest{
		Subject: r.Subject, SourceID: r.SourceID, RevisionID: r.RevisionID, ExtractionID: r.ExtractionID,
		IncludeContent: r.IncludeContent, Cursor: r.Cursor, Limit: r.Limit,
		Path: r.Path, File: r.File, StartLine: r.StartLine, EndLine: r.EndLine, Budget: r.Budget,
	}, &render.ContentFit{MaxTokens: cfg.DefaultMaxTokens, Counter: cfg.TokenCounter})
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return interfaces.InspectResult{}, workspace.Wrap(workspace.CodeInternal, err, "internal error")
	}
	return interfaces.InspectResult{Result: b}, nil
}
