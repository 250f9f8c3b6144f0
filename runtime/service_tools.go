package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

func notYet(what string) error {
	return workspace.Errorf(workspace.CodeUnavailable, "%s is not available in this build yet", what)
}

// Search runs a query.
func (s *Local) Search(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	if err := require(ctx, workspace.GrantRead); err != nil {
		return interfaces.SearchOutput{}, err
	}
	return interfaces.SearchOutput{}, notYet("search")
}
