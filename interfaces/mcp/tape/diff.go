package tape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tychora/tychora/workspace"
)

// Outcome is the verdict of Diff, and the exit status of tychora tape diff.
type Outcome int

const (
	Same            Outcome = 0 // the same calls with the same results
	OutputDrift     Outcome = 1 // the same calls, other results
	StructuralDrift Outcome = 2 // other calls, another order, another count
)

// DiffOptions configure Diff. The zero value works.
type DiffOptions struct {
	// Strict compares raw bytes: no volatile value is normalized.
	Strict bool
	// Context is how many exchanges before the drift are reported
	// (default 3).
	Context int
}

// DiffResult is what Diff found.
type DiffResult struct {
	Outcome Outcome
	Reason  string
	// A and B are the first drifted exchange on each side (one may be nil
	// when a call is on one side only); Context the exchanges of A (or B)
	// before it.
	A, B    *Exchange
	Context []*Exchange
	// AOut and BOut are the compared responses (normalized unless
	// Strict), on output drift.
	AOut, BOut string
	Exchanges  int // the number of exchanges of A
}

// Diff compares two tapes call by call. Calls are paired by key (method
// and arguments, normalized unless Strict), each call of b with the
// earliest unpaired one of a. A call on one side only, or two calls in
// another order that overlapped in neither recording (were not in flight
// at the same time), is structural drift; paired calls whose responses
// differ are output drift. The first drift in b's order is reported.
func Diff(a, b *Tape, o DiffOptions) DiffResult {
	if o.Context <= 0 {
		o.Context = 3
	}
	xa, xb := a.Exchanges(), b.Exchanges()
	res := DiffResult{Exchanges: len(xa)}
	key := func(x *Exchange) string {
		if handshake(x.Method) {
			return x.Method
		}
		params := x.Params
		if !o.Strict {
			params = Normalize(params)
		}
		k, err := MatchKey(x.Method, params)
		if err != nil {
			return x.Method + " " + string(x.Params)
		}
		return k
	}
	byKey := map[string][]*Exchange{}
	for _, x := range xa {
		byKey[key(x)] = append(byKey[key(x)], x)
	}
	pairOf := make([]*Exchange, len(xb)) // b's index → its a
	used := map[*Exchange]bool{}
	for i, x := range xb {
		for _, cand := range byKey[key(x)] {
			if !used[cand] {
				used[cand], pairOf[i] = true, cand
				break
			}
		}
		if pairOf[i] == nil {
			res.Outcome, res.B = StructuralDrift, x
			res.Reason = fmt.Sprintf("call %d of B (%s) is not in A", i+1, describe(x))
			res.Context = before(xb, i, o.Context)
			return res
		}
	}
	for _, x := range xa {
		if !used[x] {
			res.Outcome, res.A = StructuralDrift, x
			res.Reason = fmt.Sprintf("call %d of A (%s) is not in B (A has %d calls, B %d)", x.Index+1, describe(x), len(xa), len(xb))
			res.Context = before(xa, x.Index, o.Context)
			return res
		}
	}
	for j := range xb {
		for i := range j {
			ai, aj := pairOf[i], pairOf[j]
			if ai.Index > aj.Index && !overlap(ai, aj) && !overlap(xb[i], xb[j]) {
				res.Outcome, res.A, res.B = StructuralDrift, aj, xb[j]
				res.Reason = fmt.Sprintf("call %d of B (%s) comes after call %d (%s), which A made after it, and neither recording had them in flight together", j+1, describe(xb[j]), i+1, describe(xb[i]))
				res.Context = before(xb, j, o.Context)
				return res
			}
		}
	}
	for j, x := range xb {
		ax := pairOf[j]
		outA, outB := output(ax, o.Strict), output(x, o.Strict)
		if outA != outB {
			res.Outcome, res.A, res.B = OutputDrift, ax, x
			res.Reason = fmt.Sprintf("call %d (%s) got another answer", ax.Index+1, describe(ax))
			res.Context = before(xa, ax.Index, o.Context)
			res.AOut, res.BOut = outA, outB
			return res
		}
	}
	return res
}

func describe(x *Exchange) string {
	if x.Tool != "" {
		args := toolArguments(x.Params)
		return fmt.Sprintf("%s %s %s", x.Method, x.Tool, workspace.Clip(args, 120))
	}
	if handshake(x.Method) {
		return x.Method
	}
	c, err := Canonical(x.Params, true)
	if err != nil || string(c) == "{}" {
		return x.Method
	}
	return x.Method + " " + workspace.Clip(string(c), 120)
}

func toolArguments(params json.RawMessage) string {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	c, err := Canonical(p.Arguments, false)
	if err != nil {
		return string(p.Arguments)
	}
	return string(c)
}

func before(xs []*Exchange, i, n int) []*Exchange {
	return xs[max(0, i-n):i]
}

// overlap reports whether two calls of one recording were in flight at
// the same time: each was sent before the other was answered.
func overlap(x, y *Exchange) bool {
	return x.Request.Seq < answeredAt(y) && y.Request.Seq < answeredAt(x)
}

func answeredAt(x *Exchange) int {
	if x.Response == nil {
		return int(^uint(0) >> 1)
	}
	return x.Response.Seq
}

// output is what a call's answer is compared on: the result or the error
// of its response, normalized unless strict. serverInfo, which names the
// server's build, is left out (initialize's member, and the _meta member
// every result carries from protocol 2026-07-28 on).
func output(x *Exchange, strict bool) string {
	if x.Response == nil {
		return "(no answer)"
	}
	if strict {
		return string(x.Response.Payload)
	}
	msg, err := jsonrpc.DecodeMessage(x.Response.Payload)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		return string(x.Response.Payload)
	}
	if resp.Error != nil {
		b, _ := json.Marshal(resp.Error)
		return "error " + string(Normalize(b))
	}
	return string(Normalize(withoutServerInfo(resp.Result)))
}

// Volatile values, replaced by Normalize wherever they appear in a string.
var (
	uuidPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	runPattern  = regexp.MustCompile(`run_[0-9]{39}`)
	// Sources, revisions and extractions get random ids, different in
	// every workspace (evidence ids derive from their content and stay).
	randomIDPattern = regexp.MustCompile(`\b(src|rev|ext)_[0-9a-f]{16}\b`)
	timePattern     = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?`)
	volatileKeys    = map[string]string{"cursor": "<cursor>", "next_cursor": "<cursor>", "run_id": "<run>", "job_id": "<job>"}
)

// Normalize rewrites the volatile values in raw, a JSON value, so that two
// recordings of one session against one index compare equal: UUIDs (job,
// token and workspace ids), run ids, the random ids of sources, revisions
// and extractions, and timestamps inside any string;
// members whose names end in _at (times) or _ms (durations), and cursors,
// which embed ids, whatever their value. A string that holds a JSON object
// or array (a text block with a tool's result) is normalized inside. Keys
// come out sorted. raw that is no JSON is returned as it is.
func Normalize(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := marshalCompact(normalizeValue(v, 0))
	if err != nil {
		return raw
	}
	return b
}

const maxNormalizeDepth = 64

func normalizeValue(v any, depth int) any {
	if depth > maxNormalizeDepth {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if val == nil {
				continue
			}
			if ph, ok := volatileKeys[k]; ok {
				t[k] = ph
				continue
			}
			switch {
			case strings.HasSuffix(k, "_at"):
				t[k] = "<time>"
			case strings.HasSuffix(k, "_ms"):
				t[k] = "<ms>"
			default:
				t[k] = normalizeValue(val, depth+1)
			}
		}
		return t
	case []any:
		for i := range t {
			t[i] = normalizeValue(t[i], depth+1)
		}
		return t
	case string:
		if s := strings.TrimSpace(t); len(s) > 1 && (s[0] == '{' || s[0] == '[') && json.Valid([]byte(s)) {
			return string(Normalize(json.RawMessage(s)))
		}
		t = uuidPattern.ReplaceAllString(t, "<uuid>")
		t = runPattern.ReplaceAllString(t, "<run>")
		t = randomIDPattern.ReplaceAllString(t, "<$1>")
		return timePattern.ReplaceAllString(t, "<time>")
	}
	return v
}

// serverInfoMeta is the _meta member that names the server from protocol
// 2026-07-28 on.
const serverInfoMeta = "io.modelcontextprotocol/serverInfo"

func withoutServerInfo(result json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || m == nil {
		return result
	}
	delete(m, "serverInfo")
	var meta map[string]json.RawMessage
	if json.Unmarshal(m["_meta"], &meta) == nil && meta != nil {
		delete(meta, serverInfoMeta)
		if len(meta) == 0 {
			delete(m, "_meta")
		} else {
			m["_meta"], _ = json.Marshal(meta)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return result
	}
	return b
}
