package runtime

import (
	"context"
	"encoding/json"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Discover lists one subject for the caller, over the settings in force
// and the watches as they stand when it begins.
func (s *Local) Discover(ctx context.Context, args interfaces.DiscoverArgs) (interfaces.DiscoverResult, error) {
	p, err := caller(ctx, interfaces.ToolGrant(interfaces.ToolDiscover))
	if err != nil {
		return interfaces.DiscoverResult{}, err
	}
	now := query.DiscoverState{Settings: s.owner.cfg(), Watch: s.owner.watchView()}
	page, err := s.owner.discoverer.Discover(ctx, p, now, args.Request.Subject, args.Request.Cursor, args.Request.Limit)
	if err != nil {
		return interfaces.DiscoverResult{}, err
	}
	items := make([]json.RawMessage, len(page.Items))
	for i, it := range page.Items {
		if items[i], err = json.Marshal(it); err != nil {
			return interfaces.DiscoverResult{}, workspace.Wrap(workspace.CodeInternal, err, "internal error")
		}
	}
	return interfaces.DiscoverResult{Subject: args.Request.Subject, Items: items, NextCursor: page.NextCursor}, nil
}
