package main

import (
	"context"
	"fmt"

	"github.com/tychora/tychora/interfaces"
)

// pendingJobs says, in plain words, that source jobs are waiting or
// running, and so that what a listing or a search shows may still change;
// "" when there are none. inProcess means no owner runs: the jobs wait for
// one.
func pendingJobs(ctx context.Context, svc interfaces.Service, inProcess bool) string {
	st, err := svc.Status(ctx)
	n := st.Jobs.Queued + st.Jobs.Running
	if err != nil || n == 0 {
		return ""
	}
	if inProcess {
		if n == 1 {
			return "1 job is queued and no owner is running to do it: it runs when one starts (tychora serve, or tychora sync SOURCE_ID)"
		}
		return fmt.Sprintf("%d jobs are queued and no owner is running to do them: they run when one starts (tychora serve, or tychora sync SOURCE_ID)", n)
	}
	return fmt.Sprintf("%d %s queued and %d running: what is indexed changes when %s (tychora jobs list)",
		st.Jobs.Queued, jobsWord(st.Jobs.Queued), st.Jobs.Running, endWord(n))
}

func jobsWord(n int) string {
	if n == 1 {
		return "job"
	}
	return "jobs"
}

func endWord(n int) string {
	if n == 1 {
		return "it ends"
	}
	return "they end"
}
