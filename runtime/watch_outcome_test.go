package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// TestSyncOutcome: how a sync job's end reaches the watcher. A source
// outside the ingest roots is refused (asked for again at its next change
// only); other failures back off and retry; a cancelled job or a
// stopping owner is cancelled.
func TestSyncOutcome(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	outOfRoots := workspace.Errorf(workspace.CodeOutOfRoots, "path %q is outside the ingest roots", "/elsewhere")
	for _, c := range []struct {
		name      string
		ctx, life context.Context
		err       error
		want      sources.SyncOutcome
	}{
		{"success", live, live, nil, sources.SyncDone},
		{"out of roots", live, live, outOfRoots, sources.SyncRefused},
		{"out of roots, wrapped", live, live, fmt.Errorf("sync: %w", outOfRoots), sources.SyncRefused},
		{"another error", live, live, errors.New("disk on fire"), sources.SyncFailed},
		{"not found", live, live, workspace.Errorf(workspace.CodeNotFound, "gone"), sources.SyncFailed},
		{"cancelled job", done, live, errors.New("stopped"), sources.SyncCancelled},
		{"stopping owner", live, done, outOfRoots, sources.SyncCancelled},
		{"context error", live, live, context.Canceled, sources.SyncCancelled},
	} {
		if got := syncOutcome(c.ctx, c.life, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
