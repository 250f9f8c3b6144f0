package mcpapi

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// ServeStdio serves MCP over newline-delimited JSON on in and out (a
// process's stdin and stdout) until in ends or ctx is done. Every request
// acts as principal, the process's grant. out carries MCP frames only; logs
// go to o.Logger. It returns nil at the end of in, ctx.Err() when ctx ends
// first, and the transport's error otherwise. ServeStdio never closes out;
// it closes in when in is an io.ReadCloser.
func ServeStdio(ctx context.Context, svc interfaces.Service, principal workspace.Principal, in io.Reader, out io.Writer, o Options) error {
	if !principal.Grant.Valid() {
		return workspace.Errorf(workspace.CodeInvalidArgument, "stdio principal has no valid grant")
	}
	o = o.fill()
	o.Principal = &principal
	srv := NewServer(svc, o)
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	t := &mcp.IOTransport{Reader: rc, Writer: nopWriteCloser{out}, MaxLineLength: int(o.MaxRequestBytes)}
	err := srv.Run(ctx, t)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil
	}
	return err
}

// nopWriteCloser keeps the transport from closing the caller's writer.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
