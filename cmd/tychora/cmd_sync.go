package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

func syncCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "re-index a source, or every source: only what changed is extracted again",
		UsageText: "tychora sync [--wait] [--json] SOURCE | tychora sync --all [--wait] [--json]",
		Description: "Queues a sync of SOURCE: a source id, a source name, or a path (the source's\n" +
			"folder, or a file or folder inside it; relative to the current directory).\n" +
			"A name or path that fits more than one source is refused with their ids.\n" +
			"--all syncs every source you can see. A sync asked for while one is queued\n" +
			"or running answers with that job. Without a running owner the sync runs to\n" +
			"completion in this process. With --wait the job id goes to stderr and the\n" +
			"job is followed across owner restarts, like add's. With --json each job\n" +
			"is printed as its /v1 body, one a line. Exits 1 when a job it followed\n" +
			"ends failed or cancelled (the jobs are printed all the same).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "sync every source you can see"},
			&cli.BoolFlag{Name: "wait", Usage: "follow the job until it ends (progress on stderr); exit 1 if it fails or is cancelled"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body ({\"job\":...})"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("all") {
				if err := noArgs(c); err != nil {
					return usageError("--all takes no SOURCE%s", seeHelp(c))
				}
				return syncAll(c, e)
			}
			arg, err := oneArg(c, "SOURCE")
			if err != nil {
				return err
			}
			var id string
			err = withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				id, err = resolveSource(ctx, svc, arg)
				return err
			})
			if err != nil {
				return err
			}
			return runJob(c, e, interfaces.AddSourcesRequest{Action: interfaces.SourceActionSync, SourceID: id})
		},
	}
}

// syncAll queues a sync of every visible source, then follows each job as
// sync SOURCE does.
func syncAll(c *cli.Context, e *env) error {
	dir, err := existingWorkspace(c)
	if err != nil {
		return err
	}
	return retryLost(c, func() error {
		return withService(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
			list, err := discoverAll(ctx, svc, query.SubjectSources)
			if err != nil {
				if !inProcess && httpapi.IsUnreachable(err) {
					return &ownerLost{err}
				}
				return err
			}
			var queued []jobs.Job
			for _, it := range list.Items {
				id, _ := toMap(it)["id"].(string)
				res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: interfaces.SourceActionSync, SourceID: id})
				if err != nil {
					if !inProcess && httpapi.IsUnreachable(err) && len(queued) == 0 {
						return &ownerLost{err}
					}
					return err
				}
				queued = append(queued, res.Job)
			}
			if len(queued) == 0 {
				if !c.Bool("json") {
					fmt.Fprintln(e.stdout, "no sources yet (add one with tychora add PATH)")
				}
				return nil
			}
			var errs []error
			for _, j := range queued {
				f := &follower{c: c, e: e, dir: dir, svc: svc, inProcess: inProcess}
				if err := f.follow(ctx, j); err != nil {
					errs = append(errs, err)
				}
			}
			if len(errs) > 0 {
				return errs[0] // its exit status; each job is printed
			}
			return nil
		})
	})
}

// resolveSource finds the one source that arg names: its id, its name, or
// a path that is the source's own or lies inside it (the deepest source
// wins). A name or path that fits several sources (of several collections)
// is INVALID_ARGUMENT naming them; none is NOT_FOUND.
func resolveSource(ctx context.Context, svc interfaces.Service, arg string) (string, error) {
	list, err := discoverAll(ctx, svc, query.SubjectSources)
	if err != nil {
		return "", err
	}
	type src struct{ id, name, path, collection string }
	var all []src
	for _, it := range list.Items {
		m := toMap(it)
		s := src{}
		s.id, _ = m["id"].(string)
		s.name, _ = m["name"].(string)
		s.path, _ = m["path"].(string)
		s.collection, _ = m["collection_id"].(string)
		if s.id == arg {
			return s.id, nil
		}
		all = append(all, s)
	}
	pick := func(what string, fits []src) (string, error) {
		if len(fits) == 1 {
			return fits[0].id, nil
		}
		var ids []string
		for _, s := range fits {
			ids = append(ids, fmt.Sprintf("%s (collection %s, %s)", s.id, s.collection, s.path))
		}
		return "", workspace.Errorf(workspace.CodeInvalidArgument, "%s %q fits %d sources: %s; name one by its id", what, arg, len(fits), strings.Join(ids, ", "))
	}
	var named []src
	for _, s := range all {
		if s.name == arg {
			named = append(named, s)
		}
	}
	if len(named) > 0 {
		return pick("the name", named)
	}
	p := arg
	if !filepath.IsAbs(p) {
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	var holders []src
	best := -1
	for _, s := range all {
		if s.path == "" || !(p == s.path || strings.HasPrefix(p, s.path+string(filepath.Separator))) {
			continue
		}
		switch {
		case len(s.path) > best:
			holders, best = []src{s}, len(s.path)
		case len(s.path) == best:
			holders = append(holders, s)
		}
	}
	if len(holders) > 0 {
		slices.SortFunc(holders, func(a, b src) int { return strings.Compare(a.id, b.id) })
		return pick("the path", holders)
	}
	return "", workspace.Errorf(workspace.CodeNotFound, "no source has the id, name or path %q (tychora sources lists them)", arg)
}
