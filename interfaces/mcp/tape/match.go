package tape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Exchange is one request of the client with the response it got.
type Exchange struct {
	Index    int // 0-based, in the order the requests were sent
	Method   string
	Tool     string
	Params   json.RawMessage
	Request  *Event
	Response *Event // nil when the request was never answered
}

// Exchanges pairs the client's requests with the server's responses, in
// the order the requests were sent. ping is left out: it is the
// transport's, not the session's.
func (t *Tape) Exchanges() []*Exchange {
	var out []*Exchange
	open := map[string]*Exchange{}
	for i := range t.Events {
		e := &t.Events[i]
		switch {
		case e.Dir == FromClient && e.Kind == KindRequest && e.Method != "ping":
			params, _ := requestParams(e.Payload)
			x := &Exchange{Index: len(out), Method: e.Method, Tool: e.Tool, Params: params, Request: e}
			out = append(out, x)
			open[string(e.ID)] = x
		case e.Dir == FromServer && (e.Kind == KindResponse || e.Kind == KindError):
			if x, ok := open[string(e.ID)]; ok {
				x.Response = e
				delete(open, string(e.ID))
			}
		}
	}
	return out
}

// requestParams is the params of a request payload.
func requestParams(payload json.RawMessage) (json.RawMessage, error) {
	msg, err := jsonrpc.DecodeMessage(payload)
	if err != nil {
		return nil, err
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, errors.New("not a request")
	}
	return req.Params, nil
}

// handshake reports whether method opens a session: initialize, or
// server/discover for protocol versions without a handshake. Either is
// matched on its method alone: a client's name, version and protocol
// version are no drift.
func handshake(method string) bool {
	return method == "initialize" || method == "server/discover"
}

// MatchKey is what a call is matched on: its method and its params as
// canonical JSON (object keys sorted, no insignificant space), without
// the _meta member, which carries per-connection values such as progress
// tokens and, from protocol 2026-07-28 on, the client's name and
// protocol version. Absent, null and empty params are the same. A
// handshake is keyed on its method alone.
func MatchKey(method string, params json.RawMessage) (string, error) {
	if handshake(method) {
		return method, nil
	}
	canon, err := Canonical(params, true)
	if err != nil {
		return "", fmt.Errorf("%s params: %w", method, err)
	}
	return method + " " + string(canon), nil
}

// Canonical re-encodes raw with object keys sorted and numbers as
// written; with dropMeta the top-level "_meta" member is left out. Absent
// or null raw is {}.
func Canonical(raw json.RawMessage, dropMeta bool) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the value")
	}
	if m, ok := v.(map[string]any); ok && dropMeta {
		delete(m, "_meta")
	}
	return marshalCompact(v)
}

// Matcher hands out the recorded exchanges of a tape to the calls of a
// replay: each call takes the earliest unconsumed exchange with its key,
// so that calls made in parallel or in another order still find theirs.
// It is not safe for concurrent use.
type Matcher struct {
	byKey  map[string][]*Exchange
	byTool map[string][]*Exchange // method, or "tools/call NAME", for lenient matching
	used   map[*Exchange]bool
}

// NewMatcher indexes the answered exchanges of xs.
func NewMatcher(xs []*Exchange) (*Matcher, error) {
	m := &Matcher{byKey: map[string][]*Exchange{}, byTool: map[string][]*Exchange{}, used: map[*Exchange]bool{}}
	for _, x := range xs {
		if x.Response == nil {
			continue
		}
		key, err := MatchKey(x.Method, x.Params)
		if err != nil {
			return nil, fmt.Errorf("recorded request %d: %w", x.Request.Seq, err)
		}
		m.byKey[key] = append(m.byKey[key], x)
		m.byTool[looseKey(x.Method, x.Tool)] = append(m.byTool[looseKey(x.Method, x.Tool)], x)
	}
	return m, nil
}

func looseKey(method, tool string) string {
	if tool != "" {
		return method + " " + tool
	}
	return method
}

// Take returns the exchange that answers a call of method with params:
// the earliest unconsumed one with the same key, else (lenient) the
// earliest unconsumed one of the same tool or method. When none is left,
// it returns nil and words the drift.
func (m *Matcher) Take(method string, params json.RawMessage, lenient bool) (*Exchange, string) {
	key, err := MatchKey(method, params)
	if err != nil {
		return nil, "the call's params are not valid JSON: " + err.Error()
	}
	if x := m.first(m.byKey[key]); x != nil {
		m.used[x] = true
		return x, ""
	}
	tool := toolName(method, params)
	loose := m.byTool[looseKey(method, tool)]
	if lenient {
		if x := m.first(loose); x != nil {
			m.used[x] = true
			return x, ""
		}
	}
	what := method
	if tool != "" {
		what = fmt.Sprintf("tools/call of %q", tool)
	}
	left := 0
	for _, x := range loose {
		if !m.used[x] {
			left++
		}
	}
	switch {
	case len(loose) == 0:
		return nil, fmt.Sprintf("tape drift: the tape holds no %s", what)
	case left == 0:
		return nil, fmt.Sprintf("tape drift: every recorded %s (%d) was replayed already", what, len(loose))
	}
	return nil, fmt.Sprintf("tape drift: no unconsumed recorded %s has these arguments (%d of %d left, with other arguments; tychora tape play --lenient takes them in order)", what, left, len(loose))
}

func (m *Matcher) first(xs []*Exchange) *Exchange {
	for _, x := range xs {
		if !m.used[x] {
			return x
		}
	}
	return nil
}
