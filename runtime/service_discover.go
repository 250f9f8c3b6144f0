package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Discover lists one subject for the caller.
func (s *Local) Discover(ctx context.Context, args interfaces.DiscoverArgs) (interfaces.DiscoverResult, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.DiscoverResult{}, err
	}
	page, err := s.owner.discoverer.Discover(ctx, p, args.Request.Subject, args.Request.Cursor, args.Request.Limit)
	if err != nil {
		return interfaces.DiscoverResult{}, err
	}
	return interfaces.DiscoverResult{Subject: args.Request.Subject, Items: page.Items, NextCursor: page.NextCursor}, nil
}
