package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Inspect answers about one source of the caller's collections.
func (s *Local) Inspect(ctx context.Context, args interfaces.InspectArgs) (interfaces.InspectResult, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	r := args.Request
	res, err := s.owner.inspector.Inspect(ctx, p, query.InspectRequest{
		Subject: r.Subject, SourceID: r.SourceID, RevisionID: r.RevisionID, ExtractionID: r.ExtractionID,
		IncludeContent: r.IncludeContent, Cursor: r.Cursor, Limit: r.Limit,
	})
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	return interfaces.InspectResult{Result: res}, nil
}
