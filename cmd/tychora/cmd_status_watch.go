package main

import (
	"fmt"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/sources"
)

// printWatchStatus prints status's watch lines: whether the owner
// watches, and every source that waits for a sync or is not simply
// watched.
func printWatchStatus(e *env, ws *interfaces.WatchStatus) {
	if ws == nil {
		return
	}
	if !ws.Enabled {
		fmt.Fprintln(e.stdout, "watch      off (sources change in the index only when synced)")
		return
	}
	watching := 0
	for _, s := range ws.Sources {
		if s.Mode == sources.WatchWatching {
			watching++
		}
	}
	fmt.Fprintf(e.stdout, "watch      %d of %d sources watched, %d changes waiting for a sync\n", watching, len(ws.Sources), ws.PendingChanges)
	for _, s := range ws.Sources {
		switch {
		case s.Mode != sources.WatchWatching:
			fmt.Fprintf(e.stdout, "           %s %s: %s (%s)\n", s.SourceID, s.Path, s.Mode, s.Reason)
		case s.PendingChanges > 0:
			fmt.Fprintf(e.stdout, "           %s %s: %d changes waiting\n", s.SourceID, s.Path, s.PendingChanges)
		}
	}
}
