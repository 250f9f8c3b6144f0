package runtime

import (
	"context"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// TestServiceChecksGrants: the in-process Service is the layer that
// checks grants (docs/architecture.md, "Grants"), so every call below the
// grant it needs is PERMISSION_DENIED there, before any work, whatever
// its arguments: no edge and no engine stands in front of it here.
func TestServiceChecksGrants(t *testing.T) {
	own := startOwner(t, newWorkspace(t))
	svc := own.Service()
	calls := []struct {
		name string
		need workspace.Grant
		call func(ctx context.Context) error
	}{
		{"status", workspace.GrantRead, func(ctx context.Context) error { _, err := svc.Status(ctx); return err }},
		{"discover", workspace.GrantRead, func(ctx context.Context) error {
			_, err := svc.Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources"}})
			return err
		}},
		{"search", workspace.GrantRead, func(ctx context.Context) error {
			_, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "x"}})
			return err
		}},
		{"inspect", workspace.GrantRead, func(ctx context.Context) error {
			_, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source", SourceID: "nope"}})
			return err
		}},
		{"inspect content", workspace.GrantRead, func(ctx context.Context) error {
			_, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "content", SourceID: "nope", Path: "x"}})
			return err
		}},
		{"evidence", workspace.GrantRead, func(ctx context.Context) error { _, err := svc.Evidence(ctx, "nope"); return err }},
		{"asset", workspace.GrantRead, func(ctx context.Context) error { _, err := svc.Asset(ctx, "nope"); return err }},
		{"job get", workspace.GrantRead, func(ctx context.Context) error { _, err := svc.GetJob(ctx, "nope"); return err }},
		{"job list", workspace.GrantRead, func(ctx context.Context) error {
			_, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionList})
			return err
		}},
		{"add", workspace.GrantWrite, func(ctx context.Context) error {
			_, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "bogus"})
			return err
		}},
		{"remove source", workspace.GrantWrite, func(ctx context.Context) error { _, err := svc.RemoveSource(ctx, "nope"); return err }},
		{"job cancel", workspace.GrantWrite, func(ctx context.Context) error {
			_, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionCancel, JobID: "nope"})
			return err
		}},
		{"job retry", workspace.GrantWrite, func(ctx context.Context) error {
			_, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionRetry, JobID: "nope"})
			return err
		}},
		{"token list", workspace.GrantManage, func(ctx context.Context) error { _, err := svc.ListTokens(ctx); return err }},
		{"token create", workspace.GrantManage, func(ctx context.Context) error {
			_, err := svc.CreateToken(ctx, interfaces.CreateTokenRequest{Grant: "bogus"})
			return err
		}},
		{"token revoke", workspace.GrantManage, func(ctx context.Context) error { return svc.RevokeToken(ctx, "nope") }},
	}
	below := map[workspace.Grant][]workspace.Grant{
		workspace.GrantWrite:  {workspace.GrantRead},
		workspace.GrantManage: {workspace.GrantRead, workspace.GrantWrite},
	}
	for _, c := range calls {
		// A principal with no grant is no caller at all.
		ctx := workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "token:t"})
		if err := c.call(ctx); workspace.ErrorCode(err) != workspace.CodeUnauthenticated {
			t.Errorf("%s with no grant: %v, want UNAUTHENTICATED", c.name, err)
		}
		for _, g := range below[c.need] {
			ctx := workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "token:t", Grant: g})
			if err := c.call(ctx); workspace.ErrorCode(err) != workspace.CodePermissionDenied {
				t.Errorf("%s with grant %q: %v, want PERMISSION_DENIED", c.name, g, err)
			}
		}
		// With the grant it needs, the call gets past the check (and
		// fails on its arguments or answers).
		ctx = workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "token:t", Grant: c.need})
		if err := c.call(ctx); workspace.ErrorCode(err) == workspace.CodePermissionDenied {
			t.Errorf("%s with grant %q: %v", c.name, c.need, err)
		}
	}
}
