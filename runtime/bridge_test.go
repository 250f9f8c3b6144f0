package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/interfaces/servicetest"
	"github.com/tychora/tychora/workspace"
)

// TestServiceBridge runs the behaviour suite through a bridge to a running
// owner: the owner token narrowed by the scope header.
func TestServiceBridge(t *testing.T) {
	dir := newWorkspace(t, "default", "a", "b")
	own := startOwner(t, dir)
	servicetest.Run(t, servicetest.Harness{
		As: func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context) {
			p := workspace.Principal{ID: "bridge", Grant: g, Collections: cs}
			b := NewBridge(Options{Dir: dir}, p)
			t.Cleanup(func() { b.Close(context.Background()) })
			return b, workspace.WithPrincipal(context.Background(), p)
		},
		Root: own.Settings().IngestRoots[0],
	})
	if own.Service() == nil {
		t.Fatal("owner gone")
	}
}

// TestBridgeTakesOver: when the owner exits, a bridge takes the lock and
// becomes the owner; another bridge then reaches it.
func TestBridgeTakesOver(t *testing.T) {
	dir := newWorkspace(t)
	first, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := workspace.Principal{ID: "stdio", Grant: workspace.GrantManage}
	ctx := workspace.WithPrincipal(context.Background(), p)
	b := NewBridge(Options{Dir: dir, StoppingWait: 10 * time.Second}, p)
	defer b.Close(context.Background())
	h1, err := b.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Owner() != nil {
		t.Fatal("bridge became owner while one ran")
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	h2, err := b.Health(ctx)
	if err != nil {
		t.Fatalf("after the owner left: %v", err)
	}
	if b.Owner() == nil || h2.WorkspaceID != h1.WorkspaceID {
		t.Fatalf("bridge did not take over: %+v", h2)
	}
	// A second bridge reaches the new owner over HTTP.
	c := NewBridge(Options{Dir: dir}, workspace.Principal{ID: "x", Grant: workspace.GrantRead})
	defer c.Close(context.Background())
	if _, err := c.Status(workspace.WithPrincipal(context.Background(), workspace.Principal{Grant: workspace.GrantRead})); err != nil {
		t.Fatal(err)
	}
	if c.Owner() != nil {
		t.Fatal("second bridge became owner too")
	}
	// The read-scoped bridge cannot manage tokens.
	_, err = c.ListTokens(ctx)
	if workspace.ErrorCode(err) != workspace.CodePermissionDenied {
		t.Fatalf("read bridge lists tokens: %v", err)
	}
}
