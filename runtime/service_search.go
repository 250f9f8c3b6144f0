package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
)

// searchMemoBytes bounds the token counts kept between fits (render.Memo):
// enough for the answers of a few hundred cached rankings.
const searchMemoBytes = 32 << 20

// searchCacheSize is how many rankings the search cache keeps.
const searchCacheSize = 1024

// Search answers through the owner's query.Searcher, fitted by
// render.SearchFit to the budget on the exact bytes a client receives.
func (s *Local) Search(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	p, err := caller(ctx, interfaces.ToolGrant(interfaces.ToolSearch))
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	format, err := render.ParseFormat(args.Render)
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	own := s.owner
	cfg := own.cfg()
	fit := &render.SearchFit{Format: format, MaxTokens: cfg.DefaultMaxTokens, Counter: cfg.TokenCounter,
		Memo: own.memo, Limit: interfaces.CheckResultSize}
	in := query.SearchInput{Request: args.Request, ReplayRunID: args.ReplayRunID, Render: string(format)}
	if w := own.watch(); w != nil {
		in.Unsynced = w.Pending
	}
	if _, err := own.searcher.Search(ctx, p, in, fit); err != nil {
		return interfaces.SearchOutput{}, err
	}
	out := interfaces.SearchOutput{Result: fit.Out.Result, Structured: fit.Out.Structured}
	if format != render.FormatNone {
		out.Rendered = &fit.Out.Rendered
	}
	return out, nil
}

// rankSlots is how many rankings may run at once with a read pool of
// readers connections.
func rankSlots(readers int) int {
	return max(1, readers-1)
}
