package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// hostileFixture is a real owner on loopback with one indexed folder whose
// symlinks lead out of the ingest roots, to a directory with a secret.
type hostileFixture struct {
	own       *Owner
	authority string
	root      string // the ingest root
	outside   string // a directory outside every root
	ws        string
	reader    string // a read token limited to collection a
	sourceID  string
	evidence  string // an evidence id of the folder
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "docs"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.txt"), "the zanzibarquokka secret lives outside the roots\n")
	write(filepath.Join(root, "docs", "guide.md"), "# Guide\n\nThe harbour pilot reads the tide tables.\n")
	for link, target := range map[string]string{
		filepath.Join(root, "docs", "escape.txt"): filepath.Join(outside, "secret.txt"),
		filepath.Join(root, "docs", "outdir"):     outside,
		filepath.Join(root, "link-out"):           outside,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, ".tychora")
	if _, err := Init(ws, InitOptions{IngestRoots: []string{root}, Collections: []string{"default", "a", "b"}}); err != nil {
		t.Fatal(err)
	}
	own, err := Start(context.Background(), Options{Dir: ws, ShutdownWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	res, err := own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(root, "docs")}})
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, own, res.Job.ID)
	if j.State != "succeeded" {
		t.Fatalf("add docs: %+v", j)
	}
	tok, err := own.Service().CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	var ev string
	if err := own.db.R.QueryRow(`SELECT evidence_id FROM evidence LIMIT 1`).Scan(&ev); err != nil {
		t.Fatal(err)
	}
	return &hostileFixture{own: own, authority: strings.TrimPrefix(own.URL(), "http://"), root: root, outside: outside,
		ws: ws, reader: tok.Token, sourceID: j.SourceID, evidence: ev}
}

// hostileRequest is one request, written byte for byte on a new
// connection.
type hostileRequest struct {
	method string
	target string
	host   string // "" the bound authority; "-" no Host line (and HTTP/1.0)
	token  string // "" the owner token; "-" no Authorization
	hdr    []string
	body   []byte
}

// send writes r on a fresh connection and reads the response.
func (f *hostileFixture) send(t *testing.T, r hostileRequest) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", f.authority, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	var b bytes.Buffer
	proto := "HTTP/1.1"
	if r.host == "-" {
		proto = "HTTP/1.0"
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", r.method, r.target, proto)
	switch r.host {
	case "":
		fmt.Fprintf(&b, "Host: %s\r\n", f.authority)
	case "-":
	default:
		fmt.Fprintf(&b, "Host: %s\r\n", r.host)
	}
	switch r.token {
	case "":
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", f.own.Token())
	case "-":
	default:
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", r.token)
	}
	for _, h := range r.hdr {
		fmt.Fprintf(&b, "%s\r\n", h)
	}
	if r.body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(r.body))
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.Write(r.body)
	// Written while the answer is read: a body over the limit is refused
	// before it is read, and the server may close before taking it all.
	go func() { _, _ = conn.Write(b.Bytes()) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("response body cut: %v", err)
	}
	return resp, body
}

// mcpCall makes a stateless (2026-07-28) JSON-RPC call of method with
// params (a JSON object without its closing brace).
func mcpCall(method, name, params string) hostileRequest {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "{" {
		meta = "," + meta
	}
	hdr := []string{"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: " + method}
	if name != "" {
		hdr = append(hdr, "Mcp-Name: "+name)
	}
	return hostileRequest{method: "POST", target: "/mcp/", hdr: hdr,
		body: []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + meta + `}}`)}
}

func toolCall(tool, args string) hostileRequest {
	return mcpCall("tools/call", tool, `{"name":"`+tool+`","arguments":`+args)
}

// rpcAnswer is the JSON-RPC response an MCP request got.
type rpcAnswer struct {
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func readRPC(resp *http.Response, body []byte) (rpcAnswer, error) {
	msg := body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg = nil
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"jsonrpc"`)) {
				msg = d
			}
		}
	}
	var a rpcAnswer
	err := json.Unmarshal(msg, &a)
	return a, err
}

// nested returns depth levels of JSON arrays around a number.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// TestHostileRequests sends requests an attacker or a broken client could
// send, over loopback to a real owner on /v1 and /mcp/, and checks that
// each gets the answer DESIGN §4 and §8 name (code and status), never a
// 500, and never a body that shows a path outside the caller's scope, SQL
// or a Go stack trace.
func TestHostileRequests(t *testing.T) {
	f := newHostileFixture(t)
	_, port, _ := net.SplitHostPort(f.authority)
	limit := int(f.own.Settings().MaxRequestBytes)
	addPath := func(p string) []byte {
		b, _ := json.Marshal(map[string]any{"action": "add", "source": map[string]any{"path": p}})
		return b
	}
	addSource := func(src map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"action": "add", "source": src})
		return b
	}
	inspect := func(field, id string) []byte {
		b, _ := json.Marshal(map[string]any{"request": map[string]any{"subject": "revisions", field: id}})
		return b
	}
	post := func(route string, body []byte) hostileRequest {
		return hostileRequest{method: "POST", target: route, body: body}
	}
	get := func(target string) hostileRequest { return hostileRequest{method: "GET", target: target} }
	with := func(r hostileRequest, mod func(*hostileRequest)) hostileRequest { mod(&r); return r }
	const (
		badReq   = http.StatusBadRequest
		tooLarge = http.StatusRequestEntityTooLarge
		unauth   = http.StatusUnauthorized
		denied   = http.StatusForbidden
		notFound = http.StatusNotFound
		notAllow = http.StatusMethodNotAllowed
	)
	var (
		invalid   = workspace.CodeInvalidArgument
		outRoots  = workspace.CodeOutOfRoots
		noSuch    = workspace.CodeNotFound
		noAuth    = workspace.CodeUnauthenticated
		forbidden = workspace.CodePermissionDenied
	)
	// what answers: status and envelope code; for an MCP request that MCP
	// runs (HTTP 200), the tool error's code or the JSON-RPC error's.
	type want struct {
		status int
		code   workspace.Code
		rpc    int
	}
	traversal := "../../../../../../../etc/passwd"
	cases := []struct {
		name string
		req  hostileRequest
		want want
	}{
		// Path traversal and symlink escapes in every path field.
		{"add path relative traversal", post("/v1/add_sources", addPath("../../../../etc")), want{denied, outRoots, 0}},
		{"add path absolute outside", post("/v1/add_sources", addPath("/etc/passwd")), want{denied, outRoots, 0}},
		{"add path dot-dot out of the root", post("/v1/add_sources", addPath(f.root+"/docs/../../outside")), want{denied, outRoots, 0}},
		{"add path missing outside", post("/v1/add_sources", addPath("/nonexistent-tychora/x")), want{denied, outRoots, 0}},
		{"add file symlink out", post("/v1/add_sources", addPath("docs/escape.txt")), want{denied, outRoots, 0}},
		{"add dir symlink out", post("/v1/add_sources", addPath("docs/outdir")), want{denied, outRoots, 0}},
		{"add through a dir symlink out", post("/v1/add_sources", addPath("link-out/secret.txt")), want{denied, outRoots, 0}},
		{"add missing through a dir symlink out", post("/v1/add_sources", addPath("link-out/none/deeper")), want{denied, outRoots, 0}},
		{"add the workspace", post("/v1/add_sources", addPath(f.ws)), want{badReq, invalid, 0}},
		{"add path with NUL", post("/v1/add_sources", addPath("docs\x00/../../../etc")), want{badReq, invalid, 0}},
		{"add path over 4096 bytes", post("/v1/add_sources", addPath("docs/"+strings.Repeat("a/", 2100))), want{badReq, invalid, 0}},
		{"include glob traversal", post("/v1/add_sources", addSource(map[string]any{"path": "docs", "include": []string{"../../**"}})), want{badReq, invalid, 0}},
		{"exclude glob absolute", post("/v1/add_sources", addSource(map[string]any{"path": "docs", "exclude": []string{"/etc/**"}})), want{badReq, invalid, 0}},
		{"include glob NUL", post("/v1/add_sources", addSource(map[string]any{"path": "docs", "include": []string{"a\x00b"}})), want{badReq, invalid, 0}},
		{"include glob malformed", post("/v1/add_sources", addSource(map[string]any{"path": "docs", "include": []string{"[z-a"}})), want{badReq, invalid, 0}},
		{"collection traversal", post("/v1/add_sources", addSource(map[string]any{"path": "docs", "collection_id": "../b"})), want{notFound, noSuch, 0}},
		{"sync source id traversal", post("/v1/add_sources", []byte(`{"action":"sync","source_id":"`+traversal+`"}`)), want{notFound, noSuch, 0}},
		{"inspect source id traversal", post("/v1/inspect", inspect("source_id", traversal)), want{notFound, noSuch, 0}},
		{"inspect revision id traversal", post("/v1/inspect", []byte(`{"request":{"subject":"revisions","source_id":"`+f.sourceID+`","revision_id":"`+traversal+`"}}`)), want{notFound, noSuch, 0}},
		{"inspect extraction id traversal", post("/v1/inspect", []byte(`{"request":{"subject":"channels","source_id":"`+f.sourceID+`","extraction_id":"../x"}}`)), want{notFound, noSuch, 0}},
		{"evidence id encoded traversal", get("/v1/evidence/..%2F..%2F..%2Fetc%2Fpasswd"), want{notFound, noSuch, 0}},
		{"evidence id dot segments", get("/v1/evidence/../../../etc/passwd"), want{notFound, noSuch, 0}},
		{"asset id traversal", get("/v1/assets/..%2F..%2Findex.db"), want{notFound, noSuch, 0}},
		{"asset id of no asset", get("/v1/assets/" + strings.Repeat("ab", 32)), want{notFound, noSuch, 0}},
		{"job id traversal", get("/v1/jobs/..%2F..%2Fjobs"), want{notFound, noSuch, 0}},
		{"manage_job id traversal", post("/v1/manage_job", []byte(`{"action":"get","job_id":"../../x"}`)), want{notFound, noSuch, 0}},
		// Path filters match indexed paths, relative to their source: they
		// reach nothing else, so a ".." in one matches nothing.
		{"search path filter traversal", post("/v1/search", []byte(`{"request":{"question":"secret lives outside","filters":{"paths":["../../**"]}}}`)), want{http.StatusOK, "", 0}},
		{"mcp add path traversal", toolCall("add_sources", `{"action":"add","source":{"path":"../../../../etc"}}`), want{http.StatusOK, outRoots, 0}},
		{"mcp add dir symlink out", toolCall("add_sources", `{"action":"add","source":{"path":"docs/outdir"}}`), want{http.StatusOK, outRoots, 0}},
		// A failed resource read is the JSON-RPC error -32602; stateless
		// MCP (2026-07-28) carries JSON-RPC errors with HTTP 400.
		{"mcp resource evidence traversal", mcpCall("resources/read", "tychora://evidence/../../etc/passwd", `{"uri":"tychora://evidence/../../etc/passwd"`), want{badReq, "", -32602}},
		{"mcp resource file uri", mcpCall("resources/read", "file:///etc/passwd", `{"uri":"file:///etc/passwd"`), want{badReq, "", -32602}},
		{"mcp resource asset traversal", mcpCall("resources/read", "tychora://assets/..%2F..%2Findex.db", `{"uri":"tychora://assets/..%2F..%2Findex.db"`), want{badReq, "", -32602}},

		// Sizes and shapes.
		{"question of 1 MiB", post("/v1/search", []byte(`{"request":{"question":"`+strings.Repeat("a", 1<<20)+`"}}`)), want{badReq, invalid, 0}},
		{"mcp question of 1 MiB", toolCall("search", `{"request":{"question":"`+strings.Repeat("a", 1<<20)+`"}}`), want{http.StatusOK, invalid, 0}},
		{"add path of 1 MiB", post("/v1/add_sources", addPath(strings.Repeat("a", 1<<20))), want{badReq, invalid, 0}},
		{"mcp add path with NUL", toolCall("add_sources", `{"action":"add","source":{"path":"docs\u0000/../../../etc"}}`), want{http.StatusOK, invalid, 0}},
		{"body over max_request_bytes", post("/v1/search", []byte(`{"request":{"question":"`+strings.Repeat("a", limit)+`"}}`)), want{tooLarge, invalid, 0}},
		{"mcp body over max_request_bytes", toolCall("search", `{"request":{"question":"`+strings.Repeat("a", limit)+`"}}`), want{tooLarge, invalid, 0}},
		{"nested JSON 10^5 levels", post("/v1/search", []byte(`{"request":{"question":"x","filters":{"kinds":`+nested(100000)+`}}}`)), want{badReq, invalid, 0}},
		// JSON nested deeper than the decoder goes is a parse error.
		{"mcp nested JSON 10^5 levels", toolCall("search", `{"request":{"question":"x","filters":{"kinds":`+nested(100000)+`}}}`), want{badReq, "", -32700}},
		{"wrong type", post("/v1/search", []byte(`{"request":{"question":123}}`)), want{badReq, invalid, 0}},
		{"wrong type in source", post("/v1/add_sources", []byte(`{"action":"add","source":{"path":["docs"]}}`)), want{badReq, invalid, 0}},
		{"unknown field", post("/v1/search", []byte(`{"request":{"question":"x"},"sql":"DROP TABLE evidence"}`)), want{badReq, invalid, 0}},
		{"unknown field in source", post("/v1/add_sources", []byte(`{"action":"add","source":{"path":"docs","follow_symlinks":true}}`)), want{badReq, invalid, 0}},
		{"mcp unknown field", toolCall("search", `{"request":{"question":"x"},"sql":"DROP TABLE evidence"}`), want{http.StatusOK, invalid, 0}},
		{"empty body", post("/v1/search", []byte{}), want{badReq, invalid, 0}},
		{"JSON null", post("/v1/discover", []byte(`null`)), want{badReq, invalid, 0}},
		{"trailing garbage", post("/v1/discover", []byte(`{"request":{"subject":"sources"}}]]`)), want{badReq, invalid, 0}},
		{"invalid UTF-8 in a string", post("/v1/search", []byte("{\"request\":{\"question\":\"caf\xe9 \xff\xfe\"}}")), want{badReq, invalid, 0}},
		{"invalid UTF-8 in a path", post("/v1/add_sources", []byte("{\"action\":\"add\",\"source\":{\"path\":\"docs/\xc0\xaf..\xc0\xaf..\"}}")), want{badReq, invalid, 0}},
		{"mcp invalid UTF-8 in a string", toolCall("search", "{\"request\":{\"question\":\"caf\xe9\"}}"), want{badReq, invalid, 0}},
		{"SQL in a question", post("/v1/search", []byte(`{"request":{"question":"x' OR 1=1; DROP TABLE evidence; --"}}`)), want{http.StatusOK, "", 0}},
		{"FTS syntax in a question", post("/v1/search", []byte(`{"request":{"question":"NEAR(\"a\" \"b\", -1) OR evidence_fts:* ^"}}`)), want{http.StatusOK, "", 0}},

		// Tokens, Host, Origin, CORS, scope.
		{"token in the query string", with(get("/v1/status?access_token="+f.own.Token()+"&token="+f.own.Token()), func(r *hostileRequest) { r.token = "-" }), want{unauth, noAuth, 0}},
		{"mcp token in the query string", with(toolCall("discover", `{"request":{"subject":"sources"}}`), func(r *hostileRequest) { r.target = "/mcp/?access_token=" + f.own.Token(); r.token = "-" }), want{unauth, noAuth, 0}},
		{"token of the wrong shape", with(get("/v1/status"), func(r *hostileRequest) { r.token = "tyc_" + strings.Repeat("g", 64) }), want{unauth, noAuth, 0}},
		{"two bearer tokens", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"Authorization: Bearer " + f.own.Token()} }), want{unauth, noAuth, 0}},
		{"Host localhost", with(get("/v1/status"), func(r *hostileRequest) { r.host = "localhost:" + port }), want{denied, forbidden, 0}},
		{"Host LOCALHOST", with(get("/v1/status"), func(r *hostileRequest) { r.host = "LOCALHOST:" + port }), want{denied, forbidden, 0}},
		{"Host evil name", with(get("/v1/status"), func(r *hostileRequest) { r.host = "evil.example:" + port }), want{denied, forbidden, 0}},
		{"Host with trailing dot", with(get("/v1/status"), func(r *hostileRequest) { r.host = "127.0.0.1.:" + port }), want{denied, forbidden, 0}},
		{"Host IPv6 loopback", with(get("/v1/status"), func(r *hostileRequest) { r.host = "[::1]:" + port }), want{denied, forbidden, 0}},
		{"Host IPv4-mapped IPv6", with(get("/v1/status"), func(r *hostileRequest) { r.host = "[::ffff:127.0.0.1]:" + port }), want{denied, forbidden, 0}},
		{"Host short IPv4", with(get("/v1/status"), func(r *hostileRequest) { r.host = "127.1:" + port }), want{denied, forbidden, 0}},
		{"Host decimal IPv4", with(get("/v1/status"), func(r *hostileRequest) { r.host = "2130706433:" + port }), want{denied, forbidden, 0}},
		{"Host port with a leading zero", with(get("/v1/status"), func(r *hostileRequest) { r.host = "127.0.0.1:0" + port }), want{denied, forbidden, 0}},
		{"Host without port", with(get("/v1/status"), func(r *hostileRequest) { r.host = "127.0.0.1" }), want{denied, forbidden, 0}},
		{"no Host (HTTP/1.0)", with(get("/v1/status"), func(r *hostileRequest) { r.host = "-" }), want{denied, forbidden, 0}},
		{"Host rebinding on mcp", with(toolCall("discover", `{"request":{"subject":"sources"}}`), func(r *hostileRequest) { r.host = "attacker.example:" + port }), want{denied, forbidden, 0}},
		{"Origin cross-site", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"Origin: http://evil.example"} }), want{denied, forbidden, 0}},
		{"Origin look-alike", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"Origin: http://" + f.authority + ".evil.example"} }), want{denied, forbidden, 0}},
		{"Origin https", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"Origin: https://" + f.authority} }), want{denied, forbidden, 0}},
		{"Origin null", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"Origin: null"} }), want{denied, forbidden, 0}},
		{"Origin twice", with(get("/v1/status"), func(r *hostileRequest) {
			r.hdr = []string{"Origin: http://" + f.authority, "Origin: http://evil.example"}
		}), want{denied, forbidden, 0}},
		{"Origin cross-site on mcp", with(toolCall("discover", `{"request":{"subject":"sources"}}`), func(r *hostileRequest) {
			r.hdr = append(r.hdr, "Origin: http://evil.example")
		}), want{denied, forbidden, 0}},
		{"CORS preflight cross-site", hostileRequest{method: "OPTIONS", target: "/v1/search", token: "-",
			hdr: []string{"Origin: http://evil.example", "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization"}}, want{denied, forbidden, 0}},
		{"CORS preflight on mcp", hostileRequest{method: "OPTIONS", target: "/mcp/", token: "-",
			hdr: []string{"Origin: http://evil.example", "Access-Control-Request-Method: POST"}}, want{denied, forbidden, 0}},
		{"OPTIONS same origin", hostileRequest{method: "OPTIONS", target: "/v1/search", token: "-", hdr: []string{"Origin: http://" + f.authority}}, want{notAllow, invalid, 0}},
		{"scope asks for manage", with(get("/v1/tokens"), func(r *hostileRequest) { r.token = f.reader; r.hdr = []string{"X-Tychora-Scope: grant=manage"} }), want{denied, forbidden, 0}},
		{"scope asks for another collection", with(get("/v1/status"), func(r *hostileRequest) {
			r.token = f.reader
			r.hdr = []string{"X-Tychora-Scope: grant=read; collections=a,b"}
		}), want{denied, forbidden, 0}},
		{"scope collection traversal", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"X-Tychora-Scope: grant=read; collections=../../etc"} }), want{badReq, invalid, 0}},
		{"scope of 10 KB", with(get("/v1/status"), func(r *hostileRequest) {
			r.hdr = []string{"X-Tychora-Scope: grant=read; collections=" + strings.Repeat("a,", 5000) + "a"}
		}), want{badReq, invalid, 0}},
		// Headers over MaxHeaderBytes (64 KiB): net/http answers 431
		// before any handler runs.
		{"header of 100 KB", with(get("/v1/status"), func(r *hostileRequest) { r.hdr = []string{"X-Junk: " + strings.Repeat("x", 100<<10)} }),
			want{http.StatusRequestHeaderFieldsTooLarge, "", 0}},
		{"scope twice", with(get("/v1/status"), func(r *hostileRequest) {
			r.hdr = []string{"X-Tychora-Scope: grant=read", "X-Tychora-Scope: grant=manage"}
		}), want{badReq, invalid, 0}},
		{"reader adds a source", with(post("/v1/add_sources", addPath("docs")), func(r *hostileRequest) { r.token = f.reader }), want{denied, forbidden, 0}},
		{"reader reads evidence of another collection", with(get("/v1/evidence/"+f.evidence), func(r *hostileRequest) { r.token = f.reader }), want{notFound, noSuch, 0}},
		{"reader inspects a source of another collection", with(post("/v1/inspect", []byte(`{"request":{"subject":"source","source_id":"`+f.sourceID+`"}}`)), func(r *hostileRequest) { r.token = f.reader }), want{notFound, noSuch, 0}},
		{"mcp reader adds a source", with(toolCall("add_sources", `{"action":"add","source":{"path":"docs"}}`), func(r *hostileRequest) { r.token = f.reader }), want{http.StatusOK, forbidden, 0}},

		// Malformed JSON-RPC.
		// What is not JSON is the JSON-RPC parse error, JSON that is no
		// message the invalid request (both with a null id, HTTP 400).
		{"mcp malformed JSON", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream"}, body: []byte(`{"jsonrpc":"2.0","id":1,"method":`)}, want{badReq, "", -32700}},
		{"mcp body not JSON", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream"}, body: []byte(`initialize please`)}, want{badReq, "", -32700}},
		{"mcp body a JSON string", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream"}, body: []byte(`"tools/list"`)}, want{badReq, "", -32600}},
		{"mcp object id", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream"}, body: []byte(`{"jsonrpc":"2.0","id":{"$gt":""},"method":"tools/list"}`)}, want{badReq, "", -32600}},
		{"mcp empty batch", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream"}, body: []byte(`[]`)}, want{badReq, "", -32600}},
		{"mcp wrong jsonrpc version", with(toolCall("discover", `{"request":{"subject":"sources"}}`), func(r *hostileRequest) {
			r.body = bytes.Replace(r.body, []byte(`"2.0"`), []byte(`"1.0"`), 1)
		}), want{badReq, "", -32600}},
		{"mcp batch array", hostileRequest{method: "POST", target: "/mcp/", hdr: []string{"Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-11-25"},
			body: []byte(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)}, want{badReq, "", -32600}},
		{"mcp unknown tool", toolCall("rm_rf", `{}`), want{badReq, "", -32602}},
		{"mcp tool arguments of the wrong type", toolCall("search", `{"request":{"question":["x"]}}`), want{http.StatusOK, invalid, 0}},
		{"mcp no token", with(toolCall("discover", `{"request":{"subject":"sources"}}`), func(r *hostileRequest) { r.token = "-" }), want{unauth, noAuth, 0}},
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases: the table must hold at least 40", len(cases))
	}
	leaks := []string{f.outside, "zanzibarquokka", "SELECT ", "INSERT ", "sqlite", "SQL logic", "goroutine ", ".go:", "panic"}
	statuses := map[int]int{}
	var slowest time.Duration
	slowName := ""
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			resp, body := f.send(t, tc.req)
			if d := time.Since(t0); d > slowest {
				slowest, slowName = d, tc.name
			}
			statuses[resp.StatusCode]++
			if resp.StatusCode >= 500 {
				t.Fatalf("HTTP %d: %.300q", resp.StatusCode, body)
			}
			for k := range resp.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("CORS header %s sent", k)
				}
			}
			for _, l := range leaks {
				if bytes.Contains(body, []byte(l)) {
					t.Errorf("the answer shows %q: %.300q", l, body)
				}
			}
			if !utf8.Valid(body) {
				t.Errorf("the answer is not valid UTF-8: %.300q", body)
			}
			if resp.StatusCode != tc.want.status {
				t.Fatalf("HTTP %d, want %d: %.300q", resp.StatusCode, tc.want.status, body)
			}
			isMCP := strings.HasPrefix(tc.req.target, "/mcp")
			switch {
			case tc.want.rpc != 0:
				a, err := readRPC(resp, body)
				if err != nil || a.Error == nil || a.Error.Code != tc.want.rpc {
					t.Fatalf("want JSON-RPC error %d: %.300q (%v)", tc.want.rpc, body, err)
				}
			case isMCP && resp.StatusCode == http.StatusOK:
				a, err := readRPC(resp, body)
				if err != nil || a.Result == nil || !a.Result.IsError || len(a.Result.Content) != 1 {
					t.Fatalf("want a tool error: %.300q (%v)", body, err)
				}
				var eb interfaces.ErrorBody
				if err := json.Unmarshal([]byte(a.Result.Content[0].Text), &eb); err != nil || eb.Error.Code != tc.want.code || eb.Error.Message == "" {
					t.Fatalf("want tool error %s: %.300q", tc.want.code, a.Result.Content[0].Text)
				}
			case tc.want.code != "":
				var eb interfaces.ErrorBody
				if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != tc.want.code || eb.Error.Message == "" {
					t.Fatalf("want %d %s: %.300q", tc.want.status, tc.want.code, body)
				}
			}
		})
	}

	t.Logf("%d hostile requests answered, by status %v; slowest %v (%s)", len(cases), statuses, slowest.Round(time.Millisecond), slowName)
	// A guard against a request that hangs or runs away, not a speed
	// check (bench/ measures speed): a 1 MiB question under -race on a
	// busy two-core machine takes seconds.
	if slowest > 20*time.Second {
		t.Errorf("a hostile request took %v to answer (%s): the bound is 20s", slowest, slowName)
	}

	// A reader sees its own runs only: the owner's run is neither listed
	// nor replayable (DESIGN §7).
	resp, body := f.send(t, post("/v1/search", []byte(`{"request":{"question":"harbour pilot"}}`)))
	var run struct {
		RunID string `json:"run_id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &run) != nil || run.RunID == "" {
		t.Fatalf("owner search: %d %s", resp.StatusCode, body)
	}
	resp, body = f.send(t, with(post("/v1/discover", []byte(`{"request":{"subject":"runs","limit":200}}`)), func(r *hostileRequest) { r.token = f.reader }))
	if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(run.RunID)) || bytes.Contains(body, []byte("harbour")) {
		t.Fatalf("a reader lists the owner's runs: %d %s", resp.StatusCode, body)
	}
	resp, body = f.send(t, with(post("/v1/search", []byte(`{"replay_run_id":"`+run.RunID+`"}`)), func(r *hostileRequest) { r.token = f.reader }))
	if resp.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte(`"NOT_FOUND"`)) {
		t.Fatalf("a reader replays the owner's run: %d %s", resp.StatusCode, body)
	}

	// Nothing outside the roots was indexed, and the owner still answers.
	var n int
	if err := f.own.db.R.QueryRow(`SELECT count(*) FROM evidence WHERE text LIKE '%zanzibarquokka%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("evidence from outside the roots: %d rows (%v)", n, err)
	}
	var sources int
	if err := f.own.db.R.QueryRow(`SELECT count(*) FROM sources`).Scan(&sources); err != nil || sources != 1 {
		t.Fatalf("%d sources after the hostile adds, want 1 (%v)", sources, err)
	}
	resp, body = f.send(t, get("/v1/status"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status after the hostile requests: %d %s", resp.StatusCode, body)
	}
}
