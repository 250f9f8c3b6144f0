package query

import (
	"context"

	"github.com/tychora/tychora/workspace"
)

// ContentFitter fits an inspect content answer to its budget: the token
// counting of package render, which sits above this one
// (render.ContentFit). A ContentFitter serves one request.
type ContentFitter interface {
	// Prepare applies the request's budget (nil when it names none) over
	// the defaults and checks its counter, before the file is read.
	Prepare(b *Budget) error
	// Fit finds the most lines, 0 to n, whose answer fits the budget,
	// counted on the exact bytes a client receives: answer(k, b) is the
	// answer holding the first k lines whose budget claims b. It returns
	// k and the budget of that answer. An answer of no line over the
	// budget is OUTPUT_BUDGET_EXCEEDED.
	Fit(n int, answer func(k int, b ContentBudget) (FileContent, error)) (int, ContentBudget, error)
}

// InspectContent answers subject content: the indexed lines of one file,
// as many of the range asked for as the budget holds (fit counts them).
// A first line alone over the budget is OUTPUT_BUDGET_EXCEEDED.
func (in *Inspector) InspectContent(ctx context.Context, p workspace.Principal, req InspectRequest, fit ContentFitter) (FileContent, error) {
	if req.RevisionID != "" || req.ExtractionID != "" || req.IncludeContent || req.Limit != 0 {
		return FileContent{}, workspace.Errorf(workspace.CodeInvalidArgument,
			"subject content takes source_id and path (or file), start_line, end_line, budget and cursor (it serves the current revision)")
	}
	if fit == nil {
		return FileContent{}, workspace.Errorf(workspace.CodeInternal, "inspect content has no fitter")
	}
	if b := req.Budget; b != nil && (b.MaxTokens < 0 || b.MaxTokens > MaxBudgetTokens) {
		return FileContent{}, workspace.Errorf(workspace.CodeInvalidArgument, "budget.max_tokens must be 1 to %d", MaxBudgetTokens)
	}
	if err := fit.Prepare(req.Budget); err != nil {
		return FileContent{}, err
	}
	if req.File != "" {
		if req.SourceID != "" || req.Path != "" {
			return FileContent{}, workspace.Errorf(workspace.CodeInvalidArgument, "give file, or source_id and path, not both")
		}
		src, rel, err := in.fileOf(ctx, p, req.File)
		if err != nil {
			return FileContent{}, err
		}
		req.SourceID, req.Path = src, rel
	}
	fl, err := in.Content(ctx, p, ContentRequest{SourceID: req.SourceID, Path: req.Path,
		StartLine: req.StartLine, EndLine: req.EndLine, Cursor: req.Cursor})
	if err != nil {
		return FileContent{}, err
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
		cur, err := in.ContentCursor(&fl, fl.StartLine+k)
		if err != nil {
			return nil, err
		}
		cursors[k] = &cur
		return &cur, nil
	}
	answer := func(k int, b ContentBudget) (FileContent, error) {
		next, err := cursorAt(k)
		if err != nil {
			return FileContent{}, err
		}
		return fl.Answer(k, b, next), nil
	}
	k, b, err := fit.Fit(rest, answer)
	if err != nil {
		return FileContent{}, err
	}
	if k == 0 && rest > 0 {
		return FileContent{}, workspace.Errorf(workspace.CodeOutputBudgetExceeded,
			"line %d alone is over budget.max_tokens %d: raise the budget", fl.StartLine, b.MaxTokens)
	}
	// The answer counted, made again for the k lines kept.
	return answer(k, b)
}
