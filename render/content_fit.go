package render

import (
	"encoding/json"

	"github.com/tychora/tychora/query"
)

// ContentFit fits the answers of inspect content (a query.ContentFitter):
// the most lines whose answer, counted exactly on the body a client
// receives, fits the budget (FitPrefix). A ContentFit serves one request.
type ContentFit struct {
	// MaxTokens and Counter are the budget when the request names none
	// (the workspace's default_max_tokens and token_counter).
	MaxTokens int
	Counter   string

	counter *Counter
}

var _ query.ContentFitter = (*ContentFit)(nil)

// Prepare applies the request's budget over the defaults and checks its
// counter.
func (f *ContentFit) Prepare(b *query.Budget) error {
	if b != nil {
		if b.MaxTokens > 0 {
			f.MaxTokens = b.MaxTokens
		}
		if b.Counter != "" {
			f.Counter = b.Counter
		}
	}
	c, err := CounterFor(f.Counter)
	if err != nil {
		return err
	}
	f.counter = c
	return nil
}

// Fit finds the most lines, 0 to n, whose answer fits: the body counted is
// the answer wrapped as the edges send it, used_tokens included.
func (f *ContentFit) Fit(n int, answer func(k int, b query.ContentBudget) (query.FileContent, error)) (int, query.ContentBudget, error) {
	budget := func(used int) query.ContentBudget {
		return query.ContentBudget{MaxTokens: f.MaxTokens, UsedTokens: used, Counter: f.counter.Name()}
	}
	k, _, used, err := FitPrefix(f.counter, f.MaxTokens, n, func(k, used int) ([]byte, error) {
		a, err := answer(k, budget(used))
		if err != nil {
			return nil, err
		}
		return contentBody(a)
	})
	if err != nil {
		return 0, query.ContentBudget{}, err
	}
	return k, budget(used), nil
}

// contentBody is the body of an inspect content answer whose tokens the
// budget counts: the answer as the result of interfaces.InspectResult
// (`{"result": …}`), encoded as the edges encode it.
func contentBody(answer query.FileContent) ([]byte, error) {
	res, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Result json.RawMessage `json:"result"`
	}{res})
}
