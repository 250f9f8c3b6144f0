package query

import (
	"context"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// TestInspectContentArguments: the arguments of subject content go with
// it alone, those of the other subjects are refused with it, and a call
// without a fitter is an internal error, never a panic.
func TestInspectContentArguments(t *testing.T) {
	ctx := context.Background()
	env := newSearchEnv(t)
	in := &Inspector{DB: env.db, Cursors: env.engine.Cursors}
	for _, tc := range []struct {
		name string
		req  InspectRequest
		code workspace.Code
	}{
		{"a path with subject source", InspectRequest{Subject: InspectSource, SourceID: "src_x", Path: "a.go"}, workspace.CodeInvalidArgument},
		{"a budget with subject coverage", InspectRequest{Subject: InspectCoverage, SourceID: "src_x", Budget: &Budget{MaxTokens: 10}}, workspace.CodeInvalidArgument},
		{"a revision with subject content", InspectRequest{Subject: InspectContent, SourceID: "src_x", Path: "a.go", RevisionID: "rev_x"}, workspace.CodeInvalidArgument},
		{"no fitter", InspectRequest{Subject: InspectContent, SourceID: "src_x", Path: "a.go"}, workspace.CodeInternal},
	} {
		if _, err := in.Inspect(ctx, env.all, tc.req, nil); workspace.ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}
