package interfaces

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tychora/tychora/workspace"
)

// argCorpus is arguments of every tool, valid and not, for the checks
// below and the fuzz target's seeds.
var argCorpus = []struct{ tool, args string }{
	{ToolDiscover, `{"request":{"subject":"sources"}}`},
	{ToolDiscover, `{"subject":"sources"}`},
	{ToolDiscover, `{"request":{"subject":"kinds","limit":0}}`},
	{ToolDiscover, `{"request":{"subject":"nope"}}`},
	{ToolDiscover, `{"request":{}}`},
	{ToolDiscover, `{}`},
	{ToolDiscover, `{"request":null}`},
	{ToolDiscover, `{"request":"sources"}`},
	{ToolSearch, `{"request":{"question":"x"}}`},
	{ToolSearch, `{"question":"x"}`},
	{ToolSearch, `{"request":{"question":"x","render":"agent@1"}}`},
	{ToolSearch, `{"request":{"question":"x","max_tokens":10}}`},
	{ToolSearch, `{"request":{"question":"x","filters":{"facets":{"a":1}}}}`},
	{ToolSearch, `{"request":{"question":"x","filters":{"roles":["tests"]}}}`},
	{ToolSearch, `{"request":{"question":"x","filters":{"paths":"docs"}}}`},
	{ToolSearch, `{"request":{"question":"x","limit":2.5}}`},
	{ToolSearch, `{"request":{"question":"x","limit":1e30}}`},
	{ToolSearch, `{"request":{"question":"x","modalities":[null]}}`},
	{ToolSearch, `{"request":{"question":"x","budget":{"max_tokens":0,"colour":1}}}`},
	{ToolSearch, `{"render":"html"}`},
	{ToolInspect, `{"request":{"subject":"coverage","source_id":"s"}}`},
	{ToolInspect, `{"request":{"subject":"coverage"}}`},
	{ToolInspect, `{"subject":"coverage","source_id":"s"}`},
	{ToolInspect, `{"request":{"subject":"content","source_id":"s","start_line":0}}`},
	{ToolAddSources, `{"action":"add","source":{"path":"docs"}}`},
	{ToolAddSources, `{"action":"add","path":"docs"}`},
	{ToolAddSources, `{"action":"add","source":{"path":"docs","source_id":"s"}}`},
	{ToolAddSources, `{"action":"add","source":{"path":"docs","kind":"dir"}}`},
	{ToolAddSources, `{"action":"move"}`},
	{ToolManageJob, `{"action":"list","limit":100}`},
	{ToolManageJob, `{"action":"list","state":"done"}`},
	{ToolManageJob, `{"action":"get","id":"j"}`},
	{ToolManageJob, `{"job_id":"j"}`},
	{OpCreateToken, `{"grant":"read"}`},
	{OpCreateToken, `{"grant":"admin"}`},
	{OpCreateToken, `{"grant":"read","collection":"a"}`},
}

// TestCheckAgreesWithValidator: the words of a refusal come from
// checkValue, which reads the schema itself; it must find a problem
// exactly where jsonschema-go refuses, for every tool's schema.
func TestCheckAgreesWithValidator(t *testing.T) {
	refused := 0
	for _, c := range argCorpus {
		agree(t, c.tool, []byte(c.args))
		if ValidateArguments(c.tool, json.RawMessage(c.args)) != nil {
			refused++
		}
	}
	if refused < len(argCorpus)/2 {
		t.Fatalf("only %d of %d arguments refused: the corpus tests little", refused, len(argCorpus))
	}
}

// agree checks raw for tool with both jsonschema-go and checkValue.
func agree(t *testing.T, tool string, raw []byte) {
	t.Helper()
	set := loadSchemas()
	root := set.named[bodySchemaName(tool)]
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	if _, ok := v.(map[string]any); !ok {
		return
	}
	dropNulls(root, v)
	verr := set.resolved[tool].Validate(v)
	ae := checkValue(tool, root, v)
	switch {
	case verr != nil && ae == nil:
		t.Errorf("%s %s: jsonschema-go refuses (%v), checkValue finds nothing", tool, raw, verr)
	case verr == nil && ae != nil:
		t.Errorf("%s %s: jsonschema-go takes it, checkValue refuses: %s", tool, raw, ae.Message())
	}
}

// FuzzArgumentErrors holds checkValue to jsonschema-go on any arguments,
// every refusal to a bounded INVALID_ARGUMENT message in valid UTF-8 that
// shows no Go internals, and every acceptance to arguments whose strings
// decode as they were sent.
func FuzzArgumentErrors(f *testing.F) {
	tools := append(ToolNames(), OpCreateToken)
	for _, c := range argCorpus {
		for j, tool := range tools {
			if tool == c.tool {
				f.Add(uint8(j), c.args)
			}
		}
	}
	for j := range tools {
		for _, s := range []string{`{"request":{"question":"\u0000\ud800"}}`, `{"request":{"question":"\ud800 lone"}}`, `{"request":{"question":"\udc00\ud800\udc00"}}`, `null`, `1e999`} {
			f.Add(uint8(j), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		tool := tools[int(which)%len(tools)]
		agree(t, tool, []byte(args))
		_, err := decodeTool(tool, json.RawMessage(args))
		if err == nil {
			if quietlyReplaced([]byte(args)) {
				t.Fatalf("%s %s: accepted, and decoding turns part of it into U+FFFD", tool, args)
			}
			return
		}
		var ae *ArgumentError
		if !errors.As(err, &ae) || workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Fatalf("%s %q: %v, want an INVALID_ARGUMENT *ArgumentError", tool, args, err)
		}
		msg := workspace.ErrorMessage(err)
		if len(msg) > 2*maxArgumentMessage || !utf8.ValidString(msg) {
			t.Fatalf("message %q", msg)
		}
		for _, w := range []string{"reflect", "map[", "<invalid", "json:"} {
			if strings.Contains(msg, w) {
				t.Fatalf("message %q shows Go internals (%q)", msg, w)
			}
		}
	})
}

// decodeTool decodes raw as the arguments of tool (or the body of
// OpCreateToken) into its Go type, as the adapters do with Decode.
func decodeTool(tool string, raw json.RawMessage) (any, error) {
	switch tool {
	case ToolDiscover:
		return Decode[DiscoverArgs](tool, raw)
	case ToolSearch:
		return Decode[SearchArgs](tool, raw)
	case ToolInspect:
		return Decode[InspectArgs](tool, raw)
	case ToolAddSources:
		return Decode[AddSourcesRequest](tool, raw)
	case ToolManageJob:
		return Decode[ManageJobRequest](tool, raw)
	case OpCreateToken:
		return Decode[CreateTokenRequest](tool, raw)
	}
	return nil, &ArgumentError{Tool: tool, Problem: ProblemUnknownTool}
}

// quietlyReplaced reports whether decoding raw (valid UTF-8) puts a
// U+FFFD in a string that raw does not hold itself.
func quietlyReplaced(raw []byte) bool {
	if bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.ContainsRune(v, utf8.RuneError)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if strings.ContainsRune(k, utf8.RuneError) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// TestArgumentErrorsName: a refusal names the field, what is wrong and
// what is allowed; a field at the wrong level says where it belongs.
func TestArgumentErrorsName(t *testing.T) {
	cases := []struct {
		tool, args string
		problem    Problem
		field      string
		belongs    string // "-" when it belongs nowhere else
		want       []string
	}{
		{ToolSearch, `{"question":"how"}`, ProblemUnknownField, "", "request",
			[]string{`unknown field "question": "question" belongs inside request, as in {"request":{"question":…}}`, "allowed at the top level: request, replay_run_id, render"}},
		{ToolSearch, `{"request":{"question":"how","render":"agent@1"}}`, ProblemUnknownField, "request", "",
			[]string{`request: unknown field "render": "render" belongs at the top level of the arguments, as in {"render":…}`, "allowed here: question, modalities, profile, filters, limit, cursor, budget"}},
		{ToolSearch, `{"request":{"question":"how","max_tokens":100}}`, ProblemUnknownField, "request", "request.budget",
			[]string{`belongs inside request.budget, as in {"request":{"budget":{"max_tokens":…}}}`}},
		{ToolDiscover, `{"subject":"sources"}`, ProblemUnknownField, "", "request",
			[]string{`unknown field "subject": "subject" belongs inside request, as in {"request":{"subject":…}}`, "allowed at the top level: request"}},
		{ToolAddSources, `{"action":"add","path":"docs"}`, ProblemUnknownField, "", "source",
			[]string{`belongs inside source, as in {"source":{"path":…}}`}},
		{ToolManageJob, `{"action":"get","id":"j"}`, ProblemUnknownField, "", "-",
			[]string{`unknown field "id"; allowed at the top level: action, job_id, state, cursor, limit`}},
		{OpCreateToken, `{"grant":"read","collection":"a"}`, ProblemUnknownField, "", "-",
			[]string{`unknown field "collection" (did you mean "collections"?); allowed at the top level: grant, collections, name`}},
		{ToolSearch, `{"request":{"question":"x","colour":1}}`, ProblemUnknownField, "request", "-",
			[]string{`request: unknown field "colour"; allowed here:`}},
		{ToolDiscover, `{"request":{"subject":"kinds","limit":0}}`, ProblemRange, "request.limit", "-",
			[]string{"request.limit: must be between 1 and 200"}},
		{ToolManageJob, `{"action":"delete"}`, ProblemEnum, "action", "-",
			[]string{"action: must be one of list, get, cancel, retry"}},
		{ToolSearch, `{"request":{}}`, ProblemMissingField, "request", "-",
			[]string{`request: missing required field "question"`}},
		{ToolSearch, `{"request":{"question":"x","limit":2.5}}`, ProblemType, "request.limit", "-",
			[]string{"request.limit: must be an integer, not a number with a fraction"}},
		{ToolSearch, `{}`, ProblemExclusive, "", "-",
			[]string{"search: give exactly one of request and replay_run_id"}},
	}
	for _, c := range cases {
		_, err := decodeTool(c.tool, json.RawMessage(c.args))
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("%s %s: %v, want an *ArgumentError", c.tool, c.args, err)
			continue
		}
		if ae.Problem != c.problem || ae.Field != c.field || ae.Tool != c.tool {
			t.Errorf("%s %s: problem %d at %q of %q, want %d at %q", c.tool, c.args, ae.Problem, ae.Field, ae.Tool, c.problem, c.field)
		}
		switch {
		case c.belongs == "-" && ae.Belongs != nil:
			t.Errorf("%s %s: belongs in %q, want nowhere", c.tool, c.args, *ae.Belongs)
		case c.belongs != "-" && (ae.Belongs == nil || *ae.Belongs != c.belongs):
			t.Errorf("%s %s: belongs %v, want %q", c.tool, c.args, ae.Belongs, c.belongs)
		}
		msg := workspace.ErrorMessage(err)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %s: message %q does not say %q", c.tool, c.args, msg, w)
			}
		}
		if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("%s %s: code %s", c.tool, c.args, workspace.ErrorCode(err))
		}
	}
}

// TestToolExamplesDecode: the example call each tool's description
// carries is valid arguments, decoded by the real decoder, and uses the
// request form where the tool has one.
func TestToolExamplesDecode(t *testing.T) {
	for _, tool := range ToolNames() {
		ex := ToolExample(tool)
		if ex == "" {
			t.Errorf("%s has no example", tool)
			continue
		}
		v, err := decodeTool(tool, json.RawMessage(ex))
		if err != nil {
			t.Errorf("%s example %s: %v", tool, ex, err)
			continue
		}
		// The example uses more than the smallest call: each field it
		// names survives the decode.
		back, _ := json.Marshal(v)
		var a, b any
		_ = json.Unmarshal([]byte(ex), &a)
		_ = json.Unmarshal(back, &b)
		if !sameJSON(a, b) {
			t.Errorf("%s example %s decodes to %s", tool, ex, back)
		}
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// checkedKeywords are the keywords checkValue reads, and those that assert
// nothing.
var checkedKeywords = map[string]bool{
	"type": true, "enum": true, "minimum": true, "maximum": true, "properties": true,
	"additionalProperties": true, "required": true, "items": true,
	"description": true, "title": true, "not": true,
}

// TestInputSchemasUseCheckedKeywords: every keyword of an input schema is
// one checkValue reads, so that a refusal is always worded from the
// schema. A new keyword (a oneOf for a new form of SourceInput, say) fails
// here until checkValue learns it.
func TestInputSchemasUseCheckedKeywords(t *testing.T) {
	var walk func(where string, v any)
	walk = func(where string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, c := range m {
			if !checkedKeywords[k] {
				t.Errorf("%s: keyword %q, which checkValue does not read", where, k)
			}
			switch k {
			case "properties":
				props, _ := c.(map[string]any)
				for name, p := range props {
					walk(where+"."+name, p)
				}
			case "items", "additionalProperties", "not":
				walk(where+"/"+k, c)
			}
		}
	}
	for _, tool := range append(ToolNames(), OpCreateToken) {
		b, err := json.Marshal(loadSchemas().named[bodySchemaName(tool)])
		if err != nil {
			t.Fatal(err)
		}
		var v any
		_ = json.Unmarshal(b, &v)
		walk(tool, v)
	}
}
