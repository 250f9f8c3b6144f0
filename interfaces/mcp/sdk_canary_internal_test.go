package mcpapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The tests of this file are canaries: each pins one behaviour of go-sdk
// that the checks before the SDK rely on, so that an upgrade that changes
// it fails here, naming the check to revisit.

// TestDecodeMessageTruncatesNumericIDs: the SDK decodes a numeric id as a
// float64 and keeps its integer part, so 1.5 and 1 would be one id, and
// integers past 2^53 lose their value. parseID refuses such ids.
func TestDecodeMessageTruncatesNumericIDs(t *testing.T) {
	one, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	half, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`))
	if err != nil {
		t.Fatalf("the SDK refuses a fractional id itself (%v): parseID's integer check may go", err)
	}
	if one.(*jsonrpc.Request).ID != half.(*jsonrpc.Request).ID {
		t.Fatal("the SDK tells 1.5 from 1: parseID's integer check may go")
	}
	for _, id := range []string{"1", "1.0", "10e-1", `"1"`, "-7", "9007199254740992"} {
		raw := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		msgs, _, code, msg := parseFrame(raw)
		if code != 0 {
			t.Fatalf("id %s refused: %s", id, msg)
		}
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			t.Fatal(err)
		}
		key, _, _ := parseID(json.RawMessage(id))
		if want := idKey(m.(*jsonrpc.Request).ID); key != want || msgs[0].id != want {
			t.Fatalf("id %s: parseFrame keys it %q, the SDK %q", id, msgs[0].id, want)
		}
	}
}

// idKey spells a decoded id as parseID keys it.
func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s:" + v
	case int64:
		return "n:" + strconv.FormatInt(v, 10)
	}
	return ""
}

// FuzzParseFrameDecodes: every message parseFrame takes, the SDK's
// jsonrpc.DecodeMessage decodes, with the same id and method; the stdio
// connection hands the SDK only what both took.
func FuzzParseFrameDecodes(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":"a","method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","method":"x","id":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _, code, _ := parseFrame(body)
		if code != 0 {
			return
		}
		for _, m := range msgs {
			dm, err := jsonrpc.DecodeMessage(m.raw)
			if err != nil {
				t.Fatalf("parseFrame takes %s, the SDK refuses it: %v", m.raw, err)
			}
			switch v := dm.(type) {
			case *jsonrpc.Request:
				if !m.hasMethod || v.Method != m.method || idKey(v.ID) != m.id {
					t.Fatalf("%s: the SDK reads request %q id %v, parseFrame %q id %q", m.raw, v.Method, v.ID.Raw(), m.method, m.id)
				}
			case *jsonrpc.Response:
				if m.hasMethod || idKey(v.ID) != m.id {
					t.Fatalf("%s: the SDK reads a response id %v, parseFrame method %v id %q", m.raw, v.ID.Raw(), m.hasMethod, m.id)
				}
			}
		}
	})
}

// TestServerMethodsAreTheSDKs reads go-sdk's own method table
// (serverMethodInfos, in the module source of the version go.mod names)
// and checks serverMethods against it in both directions: the same
// methods, each a notification or not and needing params or not as the SDK
// has it. (TestServerMethodsMatchSDK checks the same by what the SDK
// answers, for the methods of serverMethods.)
func TestServerMethodsAreTheSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/modelcontextprotocol/go-sdk").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "mcp")
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no SDK sources in %s: %v", dir, err)
	}
	consts := map[string]string{}
	var table *ast.CompositeLit
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if i >= len(vs.Values) {
					break
				}
				switch v := vs.Values[i].(type) {
				case *ast.BasicLit:
					if v.Kind == token.STRING {
						consts[id.Name], _ = strconv.Unquote(v.Value)
					}
				case *ast.CompositeLit:
					if id.Name == "serverMethodInfos" {
						table = v
					}
				}
			}
			return true
		})
	}
	if table == nil {
		t.Fatal("go-sdk has no serverMethodInfos any more: find how it checks methods now, and what screen must do")
	}
	sdk := map[string]methodRule{}
	for _, e := range table.Elts {
		kv := e.(*ast.KeyValueExpr)
		key, ok := consts[kv.Key.(*ast.Ident).Name]
		if !ok {
			t.Fatalf("the SDK's method key %v is no string constant", kv.Key)
		}
		flags := ""
		if call, ok := kv.Value.(*ast.CallExpr); ok && len(call.Args) == 2 {
			ast.Inspect(call.Args[1], func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					flags += " " + id.Name
				}
				return true
			})
		}
		sdk[key] = methodRule{notification: strings.Contains(flags, " notification"), params: !strings.Contains(flags, "missingParamsOK")}
	}
	for m, r := range sdk {
		if own, ok := serverMethods[m]; !ok {
			t.Errorf("the SDK takes %q, serverMethods does not (screen answers it -32601)", m)
		} else if own != r {
			t.Errorf("%q: serverMethods has %+v, the SDK %+v", m, own, r)
		}
	}
	for m := range serverMethods {
		if _, ok := sdk[m]; !ok {
			t.Errorf("serverMethods has %q, the SDK does not take it", m)
		}
	}
}
