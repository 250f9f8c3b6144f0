package runtime

import (
	"context"
	"testing"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/interfaces/servicetest"
	"github.com/tychora/tychora/workspace"
)

func TestServiceLocal(t *testing.T) {
	own := startOwner(t, newWorkspace(t, "default", "a", "b"))
	servicetest.Run(t, servicetest.Harness{
		As: func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context) {
			return own.Service(), workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "suite", Grant: g, Collections: cs})
		},
		Root: own.Settings().IngestRoots[0],
	})
}

func TestServiceHTTPClient(t *testing.T) {
	own := startOwner(t, newWorkspace(t, "default", "a", "b"))
	client := func(t *testing.T, secret string) (interfaces.Service, context.Context) {
		c, err := httpapi.NewClient(own.URL(), secret, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, context.Background()
	}
	servicetest.Run(t, servicetest.Harness{
		As: func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context) {
			tok, err := own.Service().CreateToken(OwnerContext(context.Background()), interfaces.CreateTokenRequest{Grant: g, Collections: cs})
			if err != nil {
				t.Fatal(err)
			}
			return client(t, tok.Token)
		},
		WithSecret: client,
		Root:       own.Settings().IngestRoots[0],
	})
}
