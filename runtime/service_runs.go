package runtime

import (
	"context"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// discoverExtra answers the discover subjects that live outside package
// query's own tables: models (token counters) and profiles.
func (own *Owner) discoverExtra(ctx context.Context, p workspace.Principal, subject string) ([]any, bool, error) {
	switch subject {
	case query.SubjectModels:
		return models(), true, nil
	case query.SubjectProfiles:
		return profiles(), true, nil
	}
	return nil, false, nil
}

// listRuns answers discover runs a page at a time (query.Discoverer.Runs).
func (own *Owner) listRuns(ctx context.Context, p workspace.Principal, before int64, limit int) ([]any, int64, error) {
	runs, next, err := own.runs.ListRuns(ctx, p, before, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]any, 0, len(runs))
	for _, r := range runs {
		out = append(out, r)
	}
	return out, next, nil
}
