package mcpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/query"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// edgeAnswer is what one edge answered to a tool's arguments: the
// structured result, or the error envelope's code and message.
type edgeAnswer struct {
	structured json.RawMessage
	code       workspace.Code
	message    string
}

// callMCP calls tool with args (raw JSON, which the SDK client sends as it
// is) on an MCP session with the real owner's /mcp/.
func callMCP(t *testing.T, cs *mcp.ClientSession, tool, args string) edgeAnswer {
	t.Helper()
	res := call(t, cs, tool, json.RawMessage(args))
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		return edgeAnswer{structured: b}
	}
	envelope(t, res)
	var eb interfaces.ErrorBody
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &eb)
	return edgeAnswer{code: eb.Error.Code, message: eb.Error.Message}
}

// callV1 posts args to the tool's /v1 route on the real owner.
func callV1(t *testing.T, own *tyruntime.Owner, tool, args string) edgeAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, own.URL()+"/v1/"+tool, strings.NewReader(args))
	req.Header.Set("Authorization", "Bearer "+own.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return edgeAnswer{structured: b}
	}
	var eb interfaces.ErrorBody
	if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != httpapi.HTTPStatus(eb.Error.Code) {
		t.Fatalf("/v1/%s %s: %d %s", tool, args, resp.StatusCode, b)
	}
	return edgeAnswer{code: eb.Error.Code, message: eb.Error.Message}
}

// goWords are bits of Go that a message must not show.
var goWords = []string{"reflect", "map[", "<invalid", "json:", "interface {", "[]string", "float64", "%!"}

func cleanMessage(t *testing.T, where, msg string) {
	t.Helper()
	for _, w := range goWords {
		if strings.Contains(msg, w) {
			t.Errorf("%s: message %q shows Go internals (%q)", where, msg, w)
		}
	}
}

// TestArgumentsBothEdges: arguments are checked against the tool's input
// schema before any work, alike on /mcp/ and /v1 of a real owner: an
// explicit 0 is refused (an absent field takes its default), a null for
// an optional field counts as absent, an integer may be written 1.0,
// escaped lone surrogates are refused, and every message names the field
// and what it must be, without Go internals.
func TestArgumentsBothEdges(t *testing.T) {
	own := startOwner(t)
	cs := httpSession(t, own, own.Token(), "", "2025-11-25")
	refused := []struct {
		name, tool, args, want string
		sameWords              bool // both edges word it exactly alike
	}{
		{"discover limit 0", "discover", `{"request":{"subject":"kinds","limit":0}}`, "request.limit: must be between 1 and 200", true},
		{"discover limit -1", "discover", `{"request":{"subject":"kinds","limit":-1}}`, "request.limit: must be between 1 and 200", true},
		{"discover limit 201", "discover", `{"request":{"subject":"kinds","limit":201}}`, "request.limit: must be between 1 and 200", true},
		{"search limit 0", "search", `{"request":{"question":"x","limit":0}}`, "request.limit: must be between 1 and 100", true},
		{"search max_tokens 0", "search", `{"request":{"question":"x","budget":{"max_tokens":0}}}`, "request.budget.max_tokens: must be between 1 and 1048576", true},
		{"search max_tokens -5", "search", `{"request":{"question":"x","budget":{"max_tokens":-5}}}`, "request.budget.max_tokens: must be between 1 and 1048576", true},
		{"inspect limit 0", "inspect", `{"request":{"subject":"source","source_id":"src_x","limit":0}}`, "request.limit: must be between 1 and 200", true},
		{"manage_job limit 0", "manage_job", `{"action":"list","limit":0}`, "limit: must be between 1 and 100", true},
		{"null required object", "discover", `{"request":null}`, "request: must be an object, not null", true},
		{"null required string", "discover", `{"request":{"subject":null}}`, "request.subject: must be a string, not null", true},
		{"null array item", "search", `{"request":{"question":"x","modalities":[null]}}`, "request.modalities[]: must be a string, not null", true},
		{"deep facets", "search", `{"request":{"question":"x","filters":{"facets":{"a":{"a":{"a":{"a":1}}}}}}}`, "request.filters.facets.*: must be a string, not an object", true},
		{"fraction", "search", `{"request":{"question":"x","limit":2.5}}`, "request.limit: must be an integer, not a number with a fraction", true},
		{"number beyond float64", "search", `{"request":{"question":"x","limit":1e400}}`, "number out of range: 1e400", true},
		{"huge integer", "manage_job", `{"action":"list","limit":1e30}`, "limit: must be between 1 and 100", true},
		{"unknown field", "search", `{"request":{"question":"x","colour":1}}`, `request: unknown field "colour"`, true},
		{"missing field", "search", `{"request":{}}`, `request: missing required field "question"`, true},
		{"question at the top", "search", `{"question":"how"}`, `unknown field "question": "question" belongs inside request, as in {"request":{"question":…}}; allowed at the top level: request, replay_run_id, render`, true},
		{"render inside request", "search", `{"request":{"question":"how","render":"agent@1"}}`, `request: unknown field "render": "render" belongs at the top level of the arguments, as in {"render":…}; allowed here: question,`, true},
		{"subject at the top", "discover", `{"subject":"sources"}`, `unknown field "subject": "subject" belongs inside request, as in {"request":{"subject":…}}; allowed at the top level: request`, true},
		{"path at the top", "add_sources", `{"action":"add","path":"docs"}`, `"path" belongs inside source`, true},
		{"neither request nor replay", "search", `{"render":"agent@1"}`, "search: give exactly one of request and replay_run_id", true},
		{"not in enum", "manage_job", `{"action":"delete"}`, "action: must be one of list, get, cancel, retry", true},
		{"unknown role", "search", `{"request":{"question":"x","filters":{"roles":["tests"]}}}`, "request.filters.roles[]: must be one of vendored, testdata, generated, minified, test, example, documentation, source", true},
		{"unknown excluded role", "search", `{"request":{"question":"x","filters":{"exclude_roles":["vendor"]}}}`, "request.filters.exclude_roles[]: must be one of vendored,", true},
		{"role kept and excluded", "search", `{"request":{"question":"x","filters":{"roles":["test"],"exclude_roles":["test"]}}}`, `role "test" is both in roles and in exclude_roles`, true},
		{"null hiding a value", "search", `{"request":{"question":"x","limit":0,"limit":null}}`, `field "limit" more than once`, true},
		{"an object given twice", "search", `{"request":{"question":"x","budget":{"max_tokens":0}},"request":{"question":"x"}}`, `field "request" more than once`, true},
		{"an unknown field in a first copy", "discover", `{"request":{"subject":"kinds","bogus":1},"request":{"subject":"kinds"}}`, `field "request" more than once`, true},
		{"lone high surrogate", "search", `{"request":{"question":"\ud800 lone"}}`, "lone surrogate", false},
		{"lone low surrogate", "discover", `{"request":{"subject":"kinds","cursor":"\uDC00"}}`, "lone surrogate", false},
		{"high then no low", "search", `{"request":{"question":"\ud800\u0041"}}`, "lone surrogate", false},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			m, v := callMCP(t, cs, c.tool, c.args), callV1(t, own, c.tool, c.args)
			for _, a := range []struct {
				edge string
				edgeAnswer
			}{{"mcp", m}, {"v1", v}} {
				if a.code != workspace.CodeInvalidArgument || !strings.Contains(a.message, c.want) {
					t.Errorf("%s: %s %q (%s), want INVALID_ARGUMENT saying %q", a.edge, a.code, a.message, a.structured, c.want)
				}
				cleanMessage(t, a.edge, a.message)
			}
			if c.sameWords && m.message != v.message {
				t.Errorf("the edges word it apart:\nmcp %q\nv1  %q", m.message, v.message)
			}
		})
	}

	accepted := []struct {
		name, tool, args string
		check            func(t *testing.T, structured json.RawMessage)
	}{
		{"absent limit", "discover", `{"request":{"subject":"kinds"}}`, nil},
		{"nulls for optional fields", "search", `{"request":{"question":"x","cursor":null,"limit":null,"budget":null,"filters":null},"render":null}`, wantLimits(10, 4000)},
		{"integer written 1.0", "search", `{"request":{"question":"x","limit":1.0,"budget":{"max_tokens":5e2}}}`, wantLimits(1, 500)},
		{"page of 2.0", "discover", `{"request":{"subject":"kinds","limit":2.0,"cursor":null}}`, func(t *testing.T, b json.RawMessage) {
			var r struct {
				Items      []any   `json:"items"`
				NextCursor *string `json:"next_cursor"`
			}
			if json.Unmarshal(b, &r); len(r.Items) != 2 || r.NextCursor == nil {
				t.Errorf("%d items, next_cursor %v: want a page of 2 and more to come", len(r.Items), r.NextCursor)
			}
		}},
		{"roles", "search", `{"request":{"question":"x","filters":{"roles":["source","test"],"exclude_roles":["vendored"]}}}`, func(t *testing.T, b json.RawMessage) {
			var r struct {
				Request struct {
					Filters struct {
						Roles        []string `json:"roles"`
						ExcludeRoles []string `json:"exclude_roles"`
					} `json:"filters"`
				} `json:"request"`
			}
			if json.Unmarshal(b, &r); !slices.Equal(r.Request.Filters.Roles, []string{"source", "test"}) || !slices.Equal(r.Request.Filters.ExcludeRoles, []string{"vendored"}) {
				t.Errorf("echoed filters %+v", r.Request.Filters)
			}
		}},
		{"job list with nulls", "manage_job", `{"action":"list","limit":1e2,"state":null,"job_id":null}`, nil},
		{"surrogate pair", "search", `{"request":{"question":"\ud83d\ude00 \\ud800 x"}}`, nil},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			for edge, a := range map[string]edgeAnswer{"mcp": callMCP(t, cs, c.tool, c.args), "v1": callV1(t, own, c.tool, c.args)} {
				if a.code != "" {
					t.Fatalf("%s: %s %q", edge, a.code, a.message)
				}
				validateJSON(t, c.tool, a.structured)
				if c.check != nil {
					c.check(t, a.structured)
				}
			}
		})
	}
}

// TestTokenBodyValidated: the body of POST /v1/tokens is checked against
// CreateTokenRequest's schema, worded as the tools' arguments are.
func TestTokenBodyValidated(t *testing.T) {
	own := startOwner(t)
	post := func(body string) (int, interfaces.ErrorBody) {
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, own.URL()+"/v1/tokens", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+own.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var eb interfaces.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		return resp.StatusCode, eb
	}
	for body, want := range map[string]string{
		`{"grant":"read","extra":1}`:         `unknown field "extra"`,
		`{"grant":null}`:                     "grant: must be a string, not null",
		`{"grant":"read","name":"\udfff"}`:   "lone surrogate",
		`{"grant":"read","collections":[1]}`: "collections[]: must be a string, not an integer",
	} {
		status, eb := post(body)
		if status != http.StatusBadRequest || eb.Error.Code != workspace.CodeInvalidArgument || !strings.Contains(eb.Error.Message, want) {
			t.Errorf("%s: %d %+v, want 400 INVALID_ARGUMENT saying %q", body, status, eb.Error, want)
		}
		cleanMessage(t, body, eb.Error.Message)
	}
	if status, eb := post(`{"grant":"read","collections":null,"name":null}`); status != http.StatusCreated {
		t.Errorf("nulls for optional fields: %d %+v", status, eb.Error)
	}
}

// TestSchemaBoundsMatchService: the bounds the input schemas put on each
// integer are the Service's own: its largest value passes the Service,
// one more is refused by it too.
func TestSchemaBoundsMatchService(t *testing.T) {
	own := startOwner(t)
	svc := own.Service()
	ctx := tyruntime.OwnerContext(testCtx(t))
	cases := []struct {
		tool string
		path []string
		call func(n int) error
	}{
		{"discover", []string{"request", "limit"}, func(n int) error {
			_, err := svc.Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "kinds", Limit: n}})
			return err
		}},
		{"inspect", []string{"request", "limit"}, func(n int) error {
			_, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "revisions", SourceID: "src_none", Limit: n}})
			return err
		}},
		{"manage_job", []string{"limit"}, func(n int) error {
			_, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "list", Limit: n})
			return err
		}},
		{"search", []string{"request", "limit"}, func(n int) error {
			_, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "x", Limit: n}})
			return err
		}},
		{"search", []string{"request", "budget", "max_tokens"}, func(n int) error {
			_, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "x", Budget: &query.Budget{MaxTokens: n}}})
			return err
		}},
	}
	for _, c := range cases {
		s := interfaces.InputSchema(c.tool)
		for _, p := range c.path {
			s = s.Properties[p]
		}
		if s.Minimum == nil || *s.Minimum != 1 || s.Maximum == nil {
			t.Fatalf("%s %v: bounds %v..%v, want 1..max", c.tool, c.path, s.Minimum, s.Maximum)
		}
		most := int(*s.Maximum)
		if err := c.call(most); workspace.ErrorCode(err) == workspace.CodeInvalidArgument {
			t.Errorf("%s %v: the Service refuses the schema's maximum %d: %v", c.tool, c.path, most, err)
		}
		if err := c.call(most + 1); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("%s %v: the Service takes %d, over the schema's maximum: %v", c.tool, c.path, most+1, err)
		}
	}
}

// TestInputIntegersBounded: every integer of every input schema has a
// minimum of at least 1 (an explicit 0 never stands for "the default")
// and a maximum (no number decodes out of range).
func TestInputIntegersBounded(t *testing.T) {
	var walk func(where string, s *jsonschema.Schema)
	walk = func(where string, s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if s.Type == "integer" && (s.Minimum == nil || *s.Minimum < 1 || s.Maximum == nil) {
			t.Errorf("%s: integer without bounds (min %v, max %v)", where, s.Minimum, s.Maximum)
		}
		for k, c := range s.Properties {
			walk(where+"."+k, c)
		}
		walk(where+"[]", s.Items)
		walk(where+".*", s.AdditionalProperties)
	}
	for _, tool := range interfaces.ToolNames() {
		walk(tool, interfaces.InputSchema(tool))
	}
	walk("CreateTokenRequest", interfaces.Schemas()["CreateTokenRequest"])
}

// wantLimits checks a search answer's echoed limit and budget.
func wantLimits(limit, maxTokens int) func(t *testing.T, b json.RawMessage) {
	return func(t *testing.T, b json.RawMessage) {
		t.Helper()
		var r struct {
			Request struct{ Limit int } `json:"request"`
			Budget  struct {
				MaxTokens int `json:"max_tokens"`
			} `json:"budget"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Request.Limit != limit || r.Budget.MaxTokens != maxTokens {
			t.Errorf("limit %d, max_tokens %d (%v): want %d and %d", r.Request.Limit, r.Budget.MaxTokens, err, limit, maxTokens)
		}
	}
}
