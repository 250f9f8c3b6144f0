package render

import (
	"sort"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/tychora/tychora/workspace"
)

// DefaultCounter is the token counter used when a request and the workspace
// settings name none.
const DefaultCounter = "o200k_base"

// CounterInfo describes one token counter for `discover models`.
type CounterInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// Counter counts tokens with one tiktoken encoding. It is safe for
// concurrent use; get one with CounterFor.
type Counter struct {
	name  string
	codec tokenizer.Codec
	memo  countMemo
}

// countMemo remembers the counts of short strings: the citations and
// headers that packing counts for each hit are the same from one answer
// to the next (a question asked again, the hits of a page in another
// budget), and tokenizing them was most of what a cached search cost.
// Counts are deterministic, so a remembered count is exact.
type countMemo struct {
	mu sync.Mutex
	m  map[string]int
}

// Bounds of countMemo: strings up to memoMaxBytes, at most memoEntries of
// them (then it starts over). A fit counts its hits by lines and fields
// (segments.go, upTo), about twice as many strings as whole parts, each
// shorter: 32,768 keep about as many answers as 16,384 kept.
const (
	memoMaxBytes = 2 << 10
	memoEntries  = 1 << 15
)

// counterDef is a lazily built, shared counter: building a codec compiles
// its split expression and loads a vocabulary of 100k–200k entries (tens of
// milliseconds), so each is built once per process.
type counterDef struct {
	info CounterInfo
	enc  tokenizer.Encoding
	once sync.Once
	c    *Counter
	err  error
}

var counterDefs = []*counterDef{
	{info: CounterInfo{Name: "o200k_base", Description: "tiktoken o200k_base (GPT-4o, GPT-4.1, o-series, GPT-5); the default"}, enc: tokenizer.O200kBase},
	{info: CounterInfo{Name: "cl100k_base", Description: "tiktoken cl100k_base (GPT-4, GPT-3.5-turbo, text-embedding-ada-002)"}, enc: tokenizer.Cl100kBase},
}

// Counters lists the available token counters, the default first.
func Counters() []CounterInfo {
	out := make([]CounterInfo, len(counterDefs))
	for i, d := range counterDefs {
		out[i] = d.info
		out[i].Default = d.info.Name == DefaultCounter
	}
	return out
}

// CounterFor returns the shared counter for name ("" means DefaultCounter).
// An unknown name is an INVALID_ARGUMENT error that lists the known ones.
func CounterFor(name string) (*Counter, error) {
	if name == "" {
		name = DefaultCounter
	}
	for _, d := range counterDefs {
		if d.info.Name != name {
			continue
		}
		d.once.Do(func() {
			codec, err := tokenizer.Get(d.enc)
			if err != nil {
				d.err = workspace.Wrap(workspace.CodeInternal, err, "token counter "+name+" is unavailable")
				return
			}
			d.c = &Counter{name: name, codec: codec}
		})
		return d.c, d.err
	}
	return nil, workspace.Errorf(workspace.CodeInvalidArgument,
		"unknown token counter %q: use o200k_base or cl100k_base", name)
}

// Name is the encoding's name, as reported in budget.counter.
func (c *Counter) Name() string { return c.name }

// Count returns the number of tokens in s (ordinary text: special-token
// markers such as "<|endoftext|>" count as the text they are). The encoder
// can only fail on a regular-expression timeout, which is never set; should
// it fail, Count returns len(s), an upper bound (every token is at least one
// byte).
func (c *Counter) Count(s string) int {
	if len(s) <= memoMaxBytes {
		c.memo.mu.Lock()
		n, ok := c.memo.m[s]
		c.memo.mu.Unlock()
		if ok {
			return n
		}
	}
	n, err := c.codec.Count(s)
	if err != nil {
		n = len(s)
	}
	if len(s) <= memoMaxBytes {
		c.memo.mu.Lock()
		if c.memo.m == nil || len(c.memo.m) >= memoEntries {
			c.memo.m = make(map[string]int, 256)
		}
		// A line of a larger text would keep that text alive: the
		// memo holds its own copy.
		c.memo.m[strings.Clone(s)] = n
		c.memo.mu.Unlock()
	}
	return n
}

// CountBytes is Count over b.
func (c *Counter) CountBytes(b []byte) int { return c.Count(string(b)) }

// tokenEnds returns the byte offset in s at which each token of s ends, in
// order; the last one is len(s). It is nil if s cannot be encoded (never in
// practice), which makes callers fall back to whole counts.
func (c *Counter) tokenEnds(s string) []int {
	_, toks, err := c.codec.Encode(s)
	if err != nil {
		return nil
	}
	ends := make([]int, len(toks))
	at := 0
	for i, t := range toks {
		at += len(t)
		ends[i] = at
	}
	if at != len(s) {
		return nil // the encoder rewrote the input (invalid UTF-8): offsets are unusable
	}
	return ends
}

// tokensBefore returns how many tokens end at or before offset a, and
// whether a is itself a token end (or 0).
func tokensBefore(ends []int, a int) (int, bool) {
	if a == 0 {
		return 0, true
	}
	i := sort.SearchInts(ends, a)
	if i < len(ends) && ends[i] == a {
		return i + 1, true
	}
	return i, false
}
