package runtime

import (
	"context"
	"encoding/json"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// Inspect answers about one source of the caller's collections.
func (s *Local) Inspect(ctx context.Context, args interfaces.InspectArgs) (interfaces.InspectResult, error) {
	p, err := caller(ctx, interfaces.ToolGrant(interfaces.ToolInspect))
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	r := args.Request
	if r.Subject == query.InspectContent {
		return s.inspectContent(ctx, p, r)
	}
	if r.Path != "" || r.StartLine != 0 || r.EndLine != 0 || r.Budget != nil {
		return interfaces.InspectResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "path, start_line, end_line and budget go with subject content")
	}
	res, err := s.owner.inspector.Inspect(ctx, p, query.InspectRequest{
		Subject: r.Subject, SourceID: r.SourceID, RevisionID: r.RevisionID, ExtractionID: r.ExtractionID,
		IncludeContent: r.IncludeContent, Cursor: r.Cursor, Limit: r.Limit,
	})
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return interfaces.InspectResult{}, workspace.Wrap(workspace.CodeInternal, err, "internal error")
	}
	return interfaces.InspectResult{Result: b}, nil
}

// inspectContent answers subject content: the indexed lines of one file,
// as many of the range asked for as the budget holds, counted exactly on
// the structured JSON (the result object, used_tokens included).
func (s *Local) inspectContent(ctx context.Context, p workspace.Principal, r interfaces.InspectRequest) (interfaces.InspectResult, error) {
	if r.RevisionID != "" || r.ExtractionID != "" || r.IncludeContent || r.Limit != 0 {
		return interfaces.InspectResult{}, workspace.Errorf(workspace.CodeInvalidArgument,
			"subject content takes source_id, path, start_line, end_line, budget and cursor (it serves the current revision)")
	}
	own := s.owner
	cfg := own.Settings()
	maxTokens, counter := cfg.DefaultMaxTokens, cfg.TokenCounter
	if b := r.Budget; b != nil {
		if b.MaxTokens < 0 || b.MaxTokens > query.MaxBudgetTokens {
			return interfaces.InspectResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "budget.max_tokens must be 1 to %d", query.MaxBudgetTokens)
		}
		if b.MaxTokens > 0 {
			maxTokens = b.MaxTokens
		}
		if b.Counter != "" {
			counter = b.Counter
		}
	}
	c, err := render.CounterFor(counter)
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	fl, err := own.inspector.Content(ctx, p, query.ContentRequest{SourceID: r.SourceID, Path: r.Path,
		StartLine: r.StartLine, EndLine: r.EndLine, Cursor: r.Cursor})
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	rest := fl.Rest()
	// One cursor per count of lines: the answer counted is the answer sent.
	cursors := map[int]*string{}
	cursorAt := func(k int) (*string, error) {
		if k >= rest {
			return nil, nil
		}
		if c, ok := cursors[k]; ok {
			return c, nil
		}
		cur, err := own.inspector.ContentCursor(&fl, fl.StartLine+k)
		if err != nil {
			return nil, err
		}
		cursors[k] = &cur
		return &cur, nil
	}
	budget := func(used int) query.ContentBudget {
		return query.ContentBudget{MaxTokens: maxTokens, UsedTokens: used, Counter: c.Name()}
	}
	k, _, used, err := render.FitPrefix(c, maxTokens, rest, func(k, used int) ([]byte, error) {
		next, err := cursorAt(k)
		if err != nil {
			return nil, err
		}
		return contentBody(fl.Answer(k, budget(used), next))
	})
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	if k == 0 && rest > 0 {
		return interfaces.InspectResult{}, workspace.Errorf(workspace.CodeOutputBudgetExceeded,
			"line %d alone is over budget.max_tokens %d: raise the budget", fl.StartLine, maxTokens)
	}
	next, err := cursorAt(k)
	if err != nil {
		return interfaces.InspectResult{}, err
	}
	// The bytes counted, made again for the k lines kept.
	res, err := json.Marshal(fl.Answer(k, budget(used), next))
	if err != nil {
		return interfaces.InspectResult{}, workspace.Wrap(workspace.CodeInternal, err, "internal error")
	}
	return interfaces.InspectResult{Result: res}, nil
}

// contentBody is the body of an inspect content answer, whose tokens the
// budget counts.
func contentBody(answer any) ([]byte, error) {
	res, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	return json.Marshal(interfaces.InspectResult{Result: res})
}
