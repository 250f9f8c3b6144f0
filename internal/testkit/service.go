package testkit

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Service is an interfaces.Service for the adapters' tests: each method
// calls its function field when it is set, else the same method of Base
// (the real Service, most often), else answers INTERNAL naming the method,
// so that a call a test did not expect is an error, never a nil
// dereference.
type Service struct {
	Base interfaces.Service

	HealthFunc       func(context.Context) (interfaces.HealthResult, error)
	StatusFunc       func(context.Context) (interfaces.StatusResult, error)
	DiscoverFunc     func(context.Context, interfaces.DiscoverArgs) (interfaces.DiscoverResult, error)
	SearchFunc       func(context.Context, interfaces.SearchArgs) (interfaces.SearchOutput, error)
	InspectFunc      func(context.Context, interfaces.InspectArgs) (interfaces.InspectResult, error)
	AddSourcesFunc   func(context.Context, interfaces.AddSourcesRequest) (interfaces.JobResult, error)
	ManageJobFunc    func(context.Context, interfaces.ManageJobRequest) (interfaces.ManageJobResult, error)
	RemoveSourceFunc func(context.Context, string) (interfaces.RemovedSource, error)
	GetJobFunc       func(context.Context, string) (interfaces.JobResult, error)
	EvidenceFunc     func(context.Context, string) (interfaces.EvidenceResult, error)
	AssetFunc        func(context.Context, string) (interfaces.Asset, error)
	ListTokensFunc   func(context.Context) (interfaces.TokenList, error)
	CreateTokenFunc  func(context.Context, interfaces.CreateTokenRequest) (interfaces.CreatedToken, error)
	RevokeTokenFunc  func(context.Context, string) error
}

var _ interfaces.Service = (*Service)(nil)

func unexpected(method string) error {
	return workspace.Errorf(workspace.CodeInternal, "testkit.Service: %s called, and neither its function nor Base is set", method)
}

func (s *Service) Health(ctx context.Context) (interfaces.HealthResult, error) {
	switch {
	case s.HealthFunc != nil:
		return s.HealthFunc(ctx)
	case s.Base != nil:
		return s.Base.Health(ctx)
	}
	return interfaces.HealthResult{}, unexpected("Health")
}

func (s *Service) Status(ctx context.Context) (interfaces.StatusResult, error) {
	switch {
	case s.StatusFunc != nil:
		return s.StatusFunc(ctx)
	case s.Base != nil:
		return s.Base.Status(ctx)
	}
	return interfaces.StatusResult{}, unexpected("Status")
}

func (s *Service) Discover(ctx context.Context, a interfaces.DiscoverArgs) (interfaces.DiscoverResult, error) {
	switch {
	case s.DiscoverFunc != nil:
		return s.DiscoverFunc(ctx, a)
	case s.Base != nil:
		return s.Base.Discover(ctx, a)
	}
	return interfaces.DiscoverResult{}, unexpected("Discover")
}

func (s *Service) Search(ctx context.Context, a interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	switch {
	case s.SearchFunc != nil:
		return s.SearchFunc(ctx, a)
	case s.Base != nil:
		return s.Base.Search(ctx, a)
	}
	return interfaces.SearchOutput{}, unexpected("Search")
}

func (s *Service) Inspect(ctx context.Context, a interfaces.InspectArgs) (interfaces.InspectResult, error) {
	switch {
	case s.InspectFunc != nil:
		return s.InspectFunc(ctx, a)
	case s.Base != nil:
		return s.Base.Inspect(ctx, a)
	}
	return interfaces.InspectResult{}, unexpected("Inspect")
}

func (s *Service) AddSources(ctx context.Context, r interfaces.AddSourcesRequest) (interfaces.JobResult, error) {
	switch {
	case s.AddSourcesFunc != nil:
		return s.AddSourcesFunc(ctx, r)
	case s.Base != nil:
		return s.Base.AddSources(ctx, r)
	}
	return interfaces.JobResult{}, unexpected("AddSources")
}

func (s *Service) ManageJob(ctx context.Context, r interfaces.ManageJobRequest) (interfaces.ManageJobResult, error) {
	switch {
	case s.ManageJobFunc != nil:
		return s.ManageJobFunc(ctx, r)
	case s.Base != nil:
		return s.Base.ManageJob(ctx, r)
	}
	return interfaces.ManageJobResult{}, unexpected("ManageJob")
}

func (s *Service) RemoveSource(ctx context.Context, id string) (interfaces.RemovedSource, error) {
	switch {
	case s.RemoveSourceFunc != nil:
		return s.RemoveSourceFunc(ctx, id)
	case s.Base != nil:
		return s.Base.RemoveSource(ctx, id)
	}
	return interfaces.RemovedSource{}, unexpected("RemoveSource")
}

func (s *Service) GetJob(ctx context.Context, id string) (interfaces.JobResult, error) {
	switch {
	case s.GetJobFunc != nil:
		return s.GetJobFunc(ctx, id)
	case s.Base != nil:
		return s.Base.GetJob(ctx, id)
	}
	return interfaces.JobResult{}, unexpected("GetJob")
}

func (s *Service) Evidence(ctx context.Context, id string) (interfaces.EvidenceResult, error) {
	switch {
	case s.EvidenceFunc != nil:
		return s.EvidenceFunc(ctx, id)
	case s.Base != nil:
		return s.Base.Evidence(ctx, id)
	}
	return interfaces.EvidenceResult{}, unexpected("Evidence")
}

func (s *Service) Asset(ctx context.Context, id string) (interfaces.Asset, error) {
	switch {
	case s.AssetFunc != nil:
		return s.AssetFunc(ctx, id)
	case s.Base != nil:
		return s.Base.Asset(ctx, id)
	}
	return interfaces.Asset{}, unexpected("Asset")
}

func (s *Service) ListTokens(ctx context.Context) (interfaces.TokenList, error) {
	switch {
	case s.ListTokensFunc != nil:
		return s.ListTokensFunc(ctx)
	case s.Base != nil:
		return s.Base.ListTokens(ctx)
	}
	return interfaces.TokenList{}, unexpected("ListTokens")
}

func (s *Service) CreateToken(ctx context.Context, r interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
	switch {
	case s.CreateTokenFunc != nil:
		return s.CreateTokenFunc(ctx, r)
	case s.Base != nil:
		return s.Base.CreateToken(ctx, r)
	}
	return interfaces.CreatedToken{}, unexpected("CreateToken")
}

func (s *Service) RevokeToken(ctx context.Context, id string) error {
	switch {
	case s.RevokeTokenFunc != nil:
		return s.RevokeTokenFunc(ctx, id)
	case s.Base != nil:
		return s.Base.RevokeToken(ctx, id)
	}
	return unexpected("RevokeToken")
}
