package mcpapi_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/sources"
)

func TestResourceTemplatesListed(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), readerP, "")
	res, err := cs.ListResourceTemplates(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rt := range res.ResourceTemplates {
		got[rt.URITemplate] = rt.MIMEType
		if rt.Description == "" {
			t.Errorf("%s has no description", rt.URITemplate)
		}
	}
	want := map[string]string{
		"tychora://schemas/{name}": "application/schema+json",
		"tychora://kinds/{id}":     "application/json",
		"tychora://evidence/{id}":  "application/json",
		"tychora://assets/{id}":    "",
	}
	if len(got) != len(want) {
		t.Fatalf("templates %v, want %v", got, want)
	}
	for k, v := range want {
		if m, ok := got[k]; !ok || m != v {
			t.Errorf("template %s: mime %q (present %v), want %q", k, m, ok, v)
		}
	}
	list, err := cs.ListResources(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	for _, u := range []string{"tychora://schemas/SearchArgs", "tychora://schemas/QueryResult", "tychora://kinds/markdown"} {
		if !slices.Contains(uris, u) {
			t.Errorf("resources/list lacks %s", u)
		}
	}
}

func readResource(t testing.TB, cs *mcp.ClientSession, uri string) (*mcp.ResourceContents, error) {
	t.Helper()
	res, err := cs.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	if res.Contents[0].URI != uri {
		t.Errorf("contents URI %q, want %q", res.Contents[0].URI, uri)
	}
	return res.Contents[0], nil
}

func TestSchemaResources(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), readerP, "")
	for _, name := range interfaces.SchemaNames() {
		c, err := readResource(t, cs, "tychora://schemas/"+name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.MIMEType != "application/schema+json" {
			t.Errorf("%s: mime %q", name, c.MIMEType)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(c.Text), &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Schema != interfaces.SchemaDialect || s.ID != "tychora://schemas/"+name {
			t.Errorf("%s: $schema %q $id %q", name, s.Schema, s.ID)
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s does not resolve: %v", name, err)
		}
	}
	c, _ := readResource(t, cs, "tychora://schemas/SearchArgs")
	if !strings.Contains(c.Text, `"additionalProperties":false`) {
		t.Errorf("SearchArgs schema is not closed: %s", c.Text)
	}
}

func TestKindResources(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), readerP, "")
	for _, k := range sources.Kinds() {
		c, err := readResource(t, cs, "tychora://kinds/"+k.ID)
		if err != nil {
			t.Fatalf("%s: %v", k.ID, err)
		}
		want, _ := json.Marshal(k)
		if c.MIMEType != "application/json" || c.Text != string(want) {
			t.Errorf("kind %s: %s %s, want %s", k.ID, c.MIMEType, c.Text, want)
		}
	}
}

// TestResourceNotFound: unknown, malformed or path-like ids are the SDK's
// resource-not-found error, never a file read.
func TestResourceNotFound(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), readerP, "")
	for _, uri := range []string{
		"tychora://schemas/Nope",
		"tychora://kinds/nope",
		"tychora://evidence/ev_does_not_exist",
		"tychora://assets/" + strings.Repeat("0", 64),
		"tychora://evidence/..",
		"tychora://evidence/%2e%2e%2fetc%2fpasswd",
		"tychora://assets/../../tychora.json",
		"tychora://schemas/" + strings.Repeat("x", 300),
		"file:///etc/passwd",
		"tychora://other/x",
	} {
		_, err := readResource(t, cs, uri)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Errorf("%s: %v, want a JSON-RPC error", uri, err)
			continue
		}
		if werr.Code != jsonrpc.CodeInvalidParams && werr.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s: code %d (%s)", uri, werr.Code, werr.Message)
		}
		if strings.Contains(werr.Message, "/tmp/") || strings.Contains(string(werr.Data), "/tmp/") {
			t.Errorf("%s: the error names a path: %s %s", uri, werr.Message, werr.Data)
		}
	}
	// Ids of the workspace's records are not found yet: no evidence exists.
	_, err := readResource(t, cs, "tychora://evidence/ev_1")
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		t.Fatalf("unknown evidence: %v", err)
	}
	t.Logf("unknown evidence: %d %s %s", werr.Code, werr.Message, werr.Data)
}

// TestResourceURIWithControlCharacter: the SDK words an unknown URI's
// not-found data with Go quoting, which is not JSON for control characters;
// the error must still reach the client, and the session live on.
func TestResourceURIWithControlCharacter(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	resp, _ := rawPost(t, url, own.Token(), nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
	rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, uri := range []string{`file:///\u0001x`, `tychora://evidence/\u007f`, `x\u0000`} {
		_, msg := rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		r := decodeRPC(t, msg)
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("%s: %s", uri, msg)
		}
	}
	_, msg := rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if !strings.Contains(string(msg), `"discover"`) {
		t.Fatalf("the session died: %s", msg)
	}
}
