package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

// newWorkspace makes a workspace under a temp ingest root with the given
// extra collections and returns its directory.
func newWorkspace(t *testing.T, collections ...string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".tychora")
	if len(collections) == 0 {
		collections = []string{"default"}
	}
	if _, err := Init(dir, InitOptions{Collections: collections}); err != nil {
		t.Fatal(err)
	}
	// These owners change their index only when a test syncs; the tests
	// of watching (watch_test.go) turn it on.
	setWatch(t, dir, false)
	return dir
}

// setWatch writes the watch setting of the workspace at dir.
func setWatch(t *testing.T, dir string, on bool) {
	t.Helper()
	l := workspace.NewLayout(dir)
	s, err := workspace.LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	s.Watch = &on
	if err := workspace.SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
}

func startOwner(t *testing.T, dir string) *Owner {
	t.Helper()
	return testkit.StartOwner(t, func(ctx context.Context) (*Owner, error) { return Start(ctx, Options{Dir: dir}) })
}

// call sends one request to the owner and returns status and body.
func call(t *testing.T, own *Owner, method, path, token string, body io.Reader, hdr map[string]string) (int, interfaces.ErrorBody, []byte) {
	t.Helper()
	status, h, b := testkit.Do(t, testkit.Request{Method: method, URL: own.URL() + path, Token: token, Header: hdr, Body: body})
	var eb interfaces.ErrorBody
	_ = json.Unmarshal(b, &eb)
	if len(h.Values("Access-Control-Allow-Origin")) > 0 {
		t.Errorf("%s %s sent a CORS header", method, path)
	}
	return status, eb, b
}

func TestEndpointFile(t *testing.T) {
	dir := newWorkspace(t)
	own := startOwner(t, dir)
	l := workspace.NewLayout(dir)

	fi, err := os.Stat(l.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf(".runtime mode %o, want 700", fi.Mode().Perm())
	}
	fi, err = os.Stat(l.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("endpoint.json mode %o, want 600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(l.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "state", "workspace_id", "pid", "url", "mcp_url", "token", "started_at", "tychora_version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("endpoint.json lacks %q", k)
		}
	}
	if len(m) != 9 {
		t.Errorf("endpoint.json has %d keys, want 9: %v", len(m), m)
	}
	ep, err := ReadEndpoint(l)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Version != 1 || ep.State != StateRunning || ep.PID != os.Getpid() || ep.URL != own.URL() ||
		ep.MCPURL != own.URL()+"/mcp/" || ep.Token != own.Token() || ep.WorkspaceID != own.WorkspaceID() ||
		ep.TychoraVersion != Version || ep.StartedAt.IsZero() {
		t.Errorf("endpoint.json = %+v", ep)
	}
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") {
		t.Errorf("url %q is not numeric loopback", ep.URL)
	}
	fi, err = os.Stat(l.DB)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("index.db mode %o, want 600", fi.Mode().Perm())
	}
}

func TestHTTPGuards(t *testing.T) {
	dir := newWorkspace(t, "default", "a", "b")
	own := startOwner(t, dir)
	ctx := OwnerContext(context.Background())
	reader, err := own.Service().CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	authority := strings.TrimPrefix(own.URL(), "http://")
	_, port, _ := net.SplitHostPort(authority)
	bogus := "tyc_" + strings.Repeat("0", 64)

	cases := []struct {
		name   string
		method string
		path   string
		token  string
		hdr    map[string]string
		body   string
		status int
		code   workspace.Code
	}{
		{"status without token", "GET", "/v1/status", "", nil, "", 401, workspace.CodeUnauthenticated},
		{"status with wrong token", "GET", "/v1/status", bogus, nil, "", 401, workspace.CodeUnauthenticated},
		{"status with weak token", "GET", "/v1/status", "secret", nil, "", 401, workspace.CodeUnauthenticated},
		{"status with basic auth", "GET", "/v1/status", "", map[string]string{"Authorization": "Basic Zm9vOmJhcg=="}, "", 401, workspace.CodeUnauthenticated},
		{"token in query string ignored", "GET", "/v1/status?token=" + own.Token() + "&access_token=" + own.Token(), "", nil, "", 401, workspace.CodeUnauthenticated},
		{"health with invalid token", "GET", "/v1/health", bogus, nil, "", 401, workspace.CodeUnauthenticated},
		{"Host localhost", "GET", "/v1/status", own.Token(), map[string]string{"Host": "localhost:" + port}, "", 403, workspace.CodePermissionDenied},
		{"Host evil", "GET", "/v1/status", own.Token(), map[string]string{"Host": "evil.example:" + port}, "", 403, workspace.CodePermissionDenied},
		{"Host without port", "GET", "/v1/health", "", map[string]string{"Host": "127.0.0.1"}, "", 403, workspace.CodePermissionDenied},
		{"Host evil on mcp", "POST", "/mcp/", own.Token(), map[string]string{"Host": "evil.example:" + port}, "{}", 403, workspace.CodePermissionDenied},
		{"Origin evil", "GET", "/v1/status", own.Token(), map[string]string{"Origin": "http://evil.example"}, "", 403, workspace.CodePermissionDenied},
		{"Origin null", "GET", "/v1/status", own.Token(), map[string]string{"Origin": "null"}, "", 403, workspace.CodePermissionDenied},
		{"Origin localhost", "GET", "/v1/status", own.Token(), map[string]string{"Origin": "http://localhost:" + port}, "", 403, workspace.CodePermissionDenied},
		{"preflight foreign origin", "OPTIONS", "/v1/search", "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, "", 403, workspace.CodePermissionDenied},
		{"other OPTIONS", "OPTIONS", "/v1/status", "", nil, "", 405, workspace.CodeInvalidArgument},
		{"reader creates token", "POST", "/v1/tokens", reader.Token, nil, `{"grant":"read"}`, 403, workspace.CodePermissionDenied},
		{"reader lists tokens", "GET", "/v1/tokens", reader.Token, nil, "", 403, workspace.CodePermissionDenied},
		// A reader learns nothing from its add_sources body: the grant
		// comes first (scope before body, DESIGN §8).
		{"reader adds with a bad body", "POST", "/v1/add_sources", reader.Token, nil, `{"action":"bogus"}`, 403, workspace.CodePermissionDenied},
		{"reader adds as text/plain", "POST", "/v1/add_sources", reader.Token, map[string]string{"Content-Type": "text/plain"}, `{"action":"bogus"}`, 403, workspace.CodePermissionDenied},
		{"scope asks for more grant", "GET", "/v1/status", reader.Token, map[string]string{httpapi.ScopeHeader: "grant=write"}, "", 403, workspace.CodePermissionDenied},
		{"scope asks for more collections", "GET", "/v1/status", reader.Token, map[string]string{httpapi.ScopeHeader: "grant=read; collections=a,b"}, "", 403, workspace.CodePermissionDenied},
		{"scope malformed", "GET", "/v1/status", own.Token(), map[string]string{httpapi.ScopeHeader: "grant"}, "", 400, workspace.CodeInvalidArgument},
		{"scope narrows owner to read", "POST", "/v1/tokens", own.Token(), map[string]string{httpapi.ScopeHeader: "grant=read"}, `{"grant":"read"}`, 403, workspace.CodePermissionDenied},
		{"unknown route", "GET", "/v1/nope", own.Token(), nil, "", 404, workspace.CodeNotFound},
		{"unknown field", "POST", "/v1/tokens", own.Token(), nil, `{"grant":"read","extra":1}`, 400, workspace.CodeInvalidArgument},
		{"bad grant", "POST", "/v1/tokens", own.Token(), nil, `{"grant":"root"}`, 400, workspace.CodeInvalidArgument},
		{"unknown collection", "POST", "/v1/tokens", own.Token(), nil, `{"grant":"read","collections":["zzz"]}`, 404, workspace.CodeNotFound},
		{"malformed json", "POST", "/v1/tokens", own.Token(), nil, `{"grant":`, 400, workspace.CodeInvalidArgument},
		{"trailing json", "POST", "/v1/tokens", own.Token(), nil, `{"grant":"read"} {}`, 400, workspace.CodeInvalidArgument},
		{"revoke unknown token", "DELETE", "/v1/tokens/nope", own.Token(), nil, "", 404, workspace.CodeNotFound},
		{"search body of the wrong type", "POST", "/v1/search", own.Token(), nil, `{"request":{"question":"x","limit":"ten"}}`, 400, workspace.CodeInvalidArgument},
		{"search body with an unknown field", "POST", "/v1/search", own.Token(), nil, `{"request":{"question":"x","colour":1}}`, 400, workspace.CodeInvalidArgument},
		{"discover with an unknown subject", "POST", "/v1/discover", own.Token(), nil, `{"request":{"subject":"everything"}}`, 400, workspace.CodeInvalidArgument},
		{"manage_job body that is an array", "POST", "/v1/manage_job", own.Token(), nil, `[{"action":"list"}]`, 400, workspace.CodeInvalidArgument},
		{"add_sources with an empty body", "POST", "/v1/add_sources", own.Token(), nil, ` `, 400, workspace.CodeInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			status, eb, raw := call(t, own, tc.method, tc.path, tc.token, body, tc.hdr)
			if status != tc.status || eb.Error.Code != tc.code {
				t.Fatalf("got %d %s, want %d %s (%s)", status, eb.Error.Code, tc.status, tc.code, raw)
			}
			if eb.Error.Message == "" {
				t.Errorf("empty error message")
			}
		})
	}

	// What passes.
	pass := []struct {
		name  string
		path  string
		token string
		hdr   map[string]string
	}{
		{"own origin", "/v1/status", own.Token(), map[string]string{"Origin": own.URL()}},
		{"reader status", "/v1/status", reader.Token, nil},
		{"narrowed scope", "/v1/status", own.Token(), map[string]string{httpapi.ScopeHeader: "grant=read; collections=a"}},
		{"anonymous health", "/v1/health", "", nil},
	}
	for _, tc := range pass {
		t.Run(tc.name, func(t *testing.T) {
			status, _, raw := call(t, own, "GET", tc.path, tc.token, nil, tc.hdr)
			if status != 200 {
				t.Fatalf("got %d (%s)", status, raw)
			}
		})
	}
	// Anonymous health says only ok; authenticated health names the owner.
	_, _, raw := call(t, own, "GET", "/v1/health", "", nil, nil)
	if strings.TrimSpace(string(raw)) != `{"status":"ok"}` {
		t.Errorf("anonymous health = %s", raw)
	}
	_, _, raw = call(t, own, "GET", "/v1/health", reader.Token, nil, nil)
	var h interfaces.HealthResult
	if err := json.Unmarshal(raw, &h); err != nil || h.WorkspaceID != own.WorkspaceID() || h.PID != os.Getpid() || h.Version == "" || h.StartedAt == nil {
		t.Errorf("authenticated health = %s", raw)
	}
}

// TestBodyLimitBeforeRead sends headers that declare a body over the limit
// and then nothing: the 413 must come without the server waiting for it.
func TestBodyLimitBeforeRead(t *testing.T) {
	dir := newWorkspace(t)
	own := startOwner(t, dir)
	authority := strings.TrimPrefix(own.URL(), "http://")
	conn, err := net.Dial("tcp", authority)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	limit := own.Settings().MaxRequestBytes
	fmt.Fprintf(conn, "POST /v1/tokens HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"gr",
		authority, own.Token(), limit+1)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	var eb interfaces.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error.Code != workspace.CodeInvalidArgument {
		t.Fatalf("body %+v (%v)", eb, err)
	}

	// A chunked body with no declared length is cut at the limit too.
	big := `{"grant":"read","name":"` + strings.Repeat("x", int(limit)) + `"}`
	req, _ := http.NewRequest("POST", own.URL()+"/v1/tokens", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+own.Token())
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: status %d, want 413", r2.StatusCode)
	}
	// Nothing was stored.
	list, err := own.Service().ListTokens(OwnerContext(context.Background()))
	if err != nil || len(list.Tokens) != 0 {
		t.Fatalf("tokens after refused bodies: %v %v", list, err)
	}
}

func TestSecondOwnerRefused(t *testing.T) {
	dir := newWorkspace(t)
	own := startOwner(t, dir)
	_, err := Start(context.Background(), Options{Dir: dir, StoppingWait: 200 * time.Millisecond})
	var ore *OwnerRunningError
	if !errors.As(err, &ore) || ore.PID != os.Getpid() || ore.URL != own.URL() {
		t.Fatalf("second start: %v", err)
	}
	if workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Errorf("code %s, want CONFLICT", workspace.ErrorCode(err))
	}
	// The first keeps serving.
	c, _, err := ConnectLocal(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestStaleEndpointReplaced(t *testing.T) {
	dir := newWorkspace(t)
	l := workspace.NewLayout(dir)
	stale := Endpoint{Version: 1, State: StateRunning, WorkspaceID: "00000000-0000-0000-0000-000000000000",
		PID: deadPID(t), URL: "http://127.0.0.1:1", MCPURL: "http://127.0.0.1:1/mcp/",
		Token: "tyc_" + strings.Repeat("a", 64), StartedAt: time.Now().UTC()}
	if err := WriteEndpoint(l, stale); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ConnectLocal(context.Background(), dir); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("ConnectLocal trusted a stale endpoint: %v", err)
	}
	own := startOwner(t, dir)
	ep, err := ReadEndpoint(l)
	if err != nil {
		t.Fatal(err)
	}
	if ep.PID != os.Getpid() || ep.Token == stale.Token || ep.WorkspaceID != own.WorkspaceID() {
		t.Fatalf("endpoint not replaced: %+v", ep)
	}
	if _, _, err := ConnectLocal(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
}

// TestConnectLocalRefusesImpostor: a live process on the named URL that
// answers for another workspace is not trusted.
func TestConnectLocalRefusesImpostor(t *testing.T) {
	a := startOwner(t, newWorkspace(t))
	dirB := newWorkspace(t)
	ep := Endpoint{Version: 1, State: StateRunning, WorkspaceID: "11111111-1111-1111-1111-111111111111",
		PID: os.Getpid(), URL: a.URL(), MCPURL: a.URL() + "/mcp/", Token: a.Token(), StartedAt: time.Now()}
	if err := WriteEndpoint(workspace.NewLayout(dirB), ep); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ConnectLocal(context.Background(), dirB); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("ConnectLocal trusted an impostor: %v", err)
	}
}

// TestConnectLocalRefusesCopiedEndpoint: a workspace copied with its
// endpoint.json (same workspace_id, a live pid, a valid token) does not
// reach the original's owner; the original, also through a symlink, does.
func TestConnectLocalRefusesCopiedEndpoint(t *testing.T) {
	dirA := newWorkspace(t)
	a := startOwner(t, dirA)
	ep, err := ReadEndpoint(workspace.NewLayout(dirA))
	if err != nil {
		t.Fatal(err)
	}
	dirB := newWorkspace(t)
	if err := WriteEndpoint(workspace.NewLayout(dirB), ep); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ConnectLocal(context.Background(), dirB); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("a copied endpoint.json reached %s: %v", a.URL(), err)
	}
	link := filepath.Join(t.TempDir(), "ws-link")
	if err := os.Symlink(dirA, link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dirA, link} {
		if _, _, err := ConnectLocal(context.Background(), d); err != nil {
			t.Fatalf("ConnectLocal(%s): %v", d, err)
		}
	}
}

func TestCloseRemovesEndpointAndReleasesLock(t *testing.T) {
	dir := newWorkspace(t)
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(workspace.NewLayout(dir).Endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("endpoint.json still there: %v", err)
	}
	lock, err := workspace.AcquireLock(workspace.NewLayout(dir))
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	lock.Release()
	if err := own.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestStartWaitsForStoppingOwner: a start that finds the lock held by an
// owner in state "stopping" waits for it instead of failing.
func TestStartWaitsForStoppingOwner(t *testing.T) {
	dir := newWorkspace(t)
	l := workspace.NewLayout(dir)
	lock, err := workspace.AcquireLock(l)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteEndpoint(l, Endpoint{Version: 1, State: StateStopping, PID: os.Getpid(), URL: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		lock.Release()
		close(released)
	}()
	own, err := Start(context.Background(), Options{Dir: dir, StoppingWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
	select {
	case <-released:
	default:
		t.Fatal("started before the stopping owner let go")
	}
}

func TestMissingWorkspace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if _, err := Start(context.Background(), Options{Dir: dir}); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("start without Create: %v", err)
	}
	own, err := Start(context.Background(), Options{Dir: dir, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
	if !own.Created() {
		t.Error("Created() = false")
	}
	if _, err := Init(dir, InitOptions{}); workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Errorf("init over an existing workspace: %v", err)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	dir := newWorkspace(t)
	for _, addr := range []string{"0.0.0.0:0", "localhost:0", "[::]:0", "192.168.1.1:0", "127.0.0.1"} {
		if _, err := Start(context.Background(), Options{Dir: dir, Listen: addr}); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("listen %q: %v", addr, err)
		}
	}
	// The lock was released after each refusal.
	startOwner(t, dir)
}

// deadPID returns a pid that no process has.
func deadPID(t *testing.T) int {
	for pid := 4_000_000; pid > 3_000_000; pid -= 7919 {
		if !pidAlive(pid) {
			return pid
		}
	}
	t.Skip("no free pid found")
	return 0
}

// TestOptionsStar: "OPTIONS *" meets the same checks as every request
// (net/http would answer it 200 by itself).
func TestOptionsStar(t *testing.T) {
	own := startOwner(t, newWorkspace(t))
	authority := strings.TrimPrefix(own.URL(), "http://")
	// Both are refused with 403: a foreign Host, and then (Host, Origin,
	// authentication, in that order) a foreign Origin.
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"evil.example", 403},
		{authority, 403},
	} {
		conn, err := net.Dial("tcp", authority)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "OPTIONS * HTTP/1.1\r\nHost: %s\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n", tc.host)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), `"PERMISSION_DENIED"`) {
			t.Errorf("OPTIONS * with Host %s: %d %s", tc.host, resp.StatusCode, body)
		}
	}
}

// TestHalfClosedWrites: a client that half-closes its connection after
// sending a write (which cancels the request's context in net/http) still
// gets it carried out and answered, never a 500.
func TestHalfClosedWrites(t *testing.T) {
	dir := newWorkspace(t)
	own := startOwner(t, dir)
	data := filepath.Join(filepath.Dir(dir), "half")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	authority := strings.TrimPrefix(own.URL(), "http://")
	send := func(path, body string) (int, string) {
		t.Helper()
		conn, err := net.Dial("tcp", authority)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			path, authority, own.Token(), len(body), body)
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i := range 4 {
		if st, body := send("/v1/tokens", fmt.Sprintf(`{"grant":"read","name":"half%d"}`, i)); st != http.StatusCreated && st != http.StatusOK {
			t.Fatalf("token %d: %d %s", i, st, body)
		}
	}
	st, body := send("/v1/add_sources", fmt.Sprintf(`{"action":"add","source":{"path":%q}}`, data))
	if st != http.StatusOK && st != http.StatusAccepted && st != http.StatusCreated {
		t.Fatalf("add_sources: %d %s", st, body)
	}
}

// TestConcurrentNamedTokens: creating one name many times at once makes one
// token, and only the last secret given out works.
func TestConcurrentNamedTokens(t *testing.T) {
	own := startOwner(t, newWorkspace(t))
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	const n = 8
	secrets := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := svc.CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "ci"})
			if err != nil {
				t.Error(err)
				return
			}
			secrets <- c.Token
		}()
	}
	wg.Wait()
	close(secrets)
	list, err := svc.ListTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, tok := range list.Tokens {
		if tok.Name != nil && *tok.Name == "ci" {
			named++
		}
	}
	if named != 1 {
		t.Fatalf("%d tokens named ci after %d concurrent creations", named, n)
	}
	working := 0
	for s := range secrets {
		if _, err := own.tokens.Authenticate(context.Background(), s); err == nil {
			working++
		}
	}
	if working != 1 {
		t.Fatalf("%d of the %d secrets work, want 1", working, n)
	}
}
