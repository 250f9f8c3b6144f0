package runtime

import (
	"context"
	"io"
	"time"

	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

// ownerDelay is how long a stdio process lets the MCP handshake run alone
// before it opens storage (when no tool call asks sooner).
const ownerDelay = 150 * time.Millisecond

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	Options
	// Principal is what the stdio client may do (serve --stdio --grant G
	// --collection C); the zero value is manage on every collection.
	Principal workspace.Principal
	In        io.Reader
	Out       io.Writer
}

// ServeStdio serves MCP on In/Out until In ends or ctx is cancelled. The
// process becomes the workspace owner when none runs (and serves siblings
// on loopback too); otherwise it bridges to the running owner's HTTP API
// without opening storage, and takes over if that owner goes away. MCP
// answers from the first message on: finding or becoming the owner
// happens beside it, so initialize and tools/list never wait for storage
// or for pending jobs.
func ServeStdio(ctx context.Context, o StdioOptions) error {
	if !o.Principal.Grant.Valid() {
		o.Principal = workspace.Principal{ID: "stdio", Grant: workspace.GrantManage}
	}
	if o.Principal.ID == "" {
		o.Principal.ID = "stdio"
	}
	o.Options.Create = true
	b := NewBridge(o.Options, o.Principal)
	go func() {
		// Become the owner, or find the running one, once the client's
		// handshake has had the machine to itself; the first tool call
		// does it at once if it comes sooner. A failure here is retried by
		// that call.
		select {
		case <-ctx.Done():
			return
		case <-time.After(ownerDelay):
		}
		if _, _, err := b.current(ctx, nil); err != nil && ctx.Err() == nil {
			b.opts.Logger.Warn("no owner yet", workspace.LogErr, err)
		}
	}()
	err := mcpapi.ServeStdio(ctx, b, o.Principal, o.In, o.Out, mcpapi.Options{Logger: o.Logger, Version: Version})
	cerr := b.Close(context.WithoutCancel(ctx))
	if err != nil && ctx.Err() == nil {
		return err
	}
	return cerr
}
