package tape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Proxy runs cmd, a stdio MCP server, between in and out (the client's
// side) and records the session on r: every line goes through unchanged
// both ways. When in ends, cmd's stdin is closed and cmd is waited for;
// when ctx is done first, cmd gets SIGTERM (SIGKILL 5 s later). cmd's
// stderr is left as the caller set it. The error is cmd's (an
// *exec.ExitError when it exits non-zero).
func Proxy(ctx context.Context, r *Recorder, cmd *exec.Cmd, in io.Reader, out io.Writer) error {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = r.Writer(out, FromServer)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	stop := context.AfterFunc(ctx, func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		time.AfterFunc(5*time.Second, func() { _ = cmd.Process.Kill() })
	})
	defer stop()
	go func() {
		_, _ = io.Copy(stdin, r.Reader(in, FromClient))
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	if ctx.Err() != nil && err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ctx.Err()
		}
	}
	return err
}
