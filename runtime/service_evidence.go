package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Evidence returns one evidence record of the caller's collections.
func (s *Local) Evidence(ctx context.Context, id string) (interfaces.EvidenceResult, error) {
	p, err := caller(ctx, workspace.GrantRead)
	if err != nil {
		return interfaces.EvidenceResult{}, err
	}
	e, err := query.GetEvidence(ctx, s.owner.db, p, id)
	if err != nil {
		return interfaces.EvidenceResult{}, err
	}
	return interfaces.EvidenceResult{Evidence: e}, nil
}

// Asset returns one asset referred to by a source of the caller's
// collections.
func (s *Local) Asset(ctx context.Context, id string) (interfaces.Asset, error) {
	p, err := caller(ctx, workspace.GrantRead)
	if err != nil {
		return interfaces.Asset{}, err
	}
	mime, data, err := query.GetAsset(ctx, s.owner.db, s.owner.assets, p, id)
	if err != nil {
		return interfaces.Asset{}, err
	}
	return interfaces.Asset{ID: id, MIME: mime, Bytes: data}, nil
}
