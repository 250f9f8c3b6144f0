package render

import (
	"github.com/tychora/tychora/workspace"
)

// FitPrefix finds the most items of a list, 0 to n, whose answer fits in
// maxTokens, when the answer's encoding holds its own token count:
// encode(k, used) returns the bytes of the answer of the first k items
// claiming used tokens, and the answer of k is the encoding whose count
// is what it claims (a fixed point, found in a few rounds as in Fit). It
// returns k, the bytes and their count. The answer is assumed to grow
// with k, except that the whole list (k = n) may cost less than n-1 (it
// has no cursor to the rest); it is tried first. An answer of no item
// over maxTokens is OUTPUT_BUDGET_EXCEEDED.
func FitPrefix(c *Counter, maxTokens, n int, encode func(k, used int) ([]byte, error)) (int, []byte, int, error) {
	settle := func(k int) ([]byte, int, bool, error) {
		used := 0
		seen := map[int]bool{}
		for range 12 {
			b, err := encode(k, used)
			if err != nil {
				return nil, 0, false, err
			}
			got := c.CountBytes(b)
			if got == used {
				return b, used, true, nil
			}
			if seen[got] {
				break
			}
			seen[used] = true
			used = got
		}
		return nil, 0, false, nil
	}
	fits := func(k int) ([]byte, int, bool, error) {
		b, used, ok, err := settle(k)
		return b, used, ok && used <= maxTokens, err
	}
	if b, used, ok, err := fits(n); err != nil || ok {
		return n, b, used, err
	}
	b, used, ok, err := fits(0)
	if err != nil {
		return 0, nil, 0, err
	}
	if !ok {
		return 0, nil, 0, workspace.Errorf(workspace.CodeOutputBudgetExceeded,
			"budget.max_tokens %d is below the smallest answer (%d tokens with %s)", maxTokens, used, c.name)
	}
	lo, hi := 0, n // lo fits, hi does not
	for hi-lo > 1 {
		m := (lo + hi) / 2
		mb, mu, ok, err := fits(m)
		if err != nil {
			return 0, nil, 0, err
		}
		if ok {
			lo, b, used = m, mb, mu
		} else {
			hi = m
		}
	}
	return lo, b, used, nil
}
