package runtime

import (
	"context"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// maxRunsListed bounds discover runs (newest first).
const maxRunsListed = 10000

// discoverExtra answers the discover subjects that live outside package
// query's own tables: models (token counters), profiles and runs.
func (own *Owner) discoverExtra(ctx context.Context, p workspace.Principal, subject string) ([]any, bool, error) {
	switch subject {
	case query.SubjectModels:
		return models(), true, nil
	case query.SubjectProfiles:
		return profiles(), true, nil
	case query.SubjectRuns:
		runs, _, err := own.runs.ListRuns(ctx, p, 0, maxRunsListed)
		if err != nil {
			return nil, true, err
		}
		out := make([]any, 0, len(runs))
		for _, r := range runs {
			out = append(out, r)
		}
		return out, true, nil
	}
	return nil, false, nil
}
