package runtime

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
)

// TestOpenAPI fetches GET /openapi from a real owner, validates it against
// the OpenAPI 3.1 schema (testdata/openapi-3.1-schema.json, the
// specification's published JSON Schema), and proves that each tool's MCP
// input schema is the /v1 request body schema of its route.
func TestOpenAPI(t *testing.T) {
	own := startOwner(t, newWorkspace(t))
	req, _ := http.NewRequest("GET", own.URL()+"/openapi", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/openapi without a token: %d", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer "+own.Token())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/openapi: %d %s", resp.StatusCode, body)
	}

	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/openapi-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta jsonschema.Schema
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	resolved, err := meta.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve the OpenAPI 3.1 schema: %v", err)
	}
	if err := resolved.Validate(doc); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1: %v", err)
	}
	// A broken document is caught (the check can fail).
	broken := map[string]any{"openapi": "3.1.0", "info": map[string]any{"version": "x"}, "paths": map[string]any{}}
	if err := resolved.Validate(broken); err == nil {
		t.Fatal("the validator accepts a document without info.title")
	}

	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Paths["/mcp/"]["post"]; !ok {
		t.Fatal("no MCP route")
	}
	for tool, path := range httpapi.ToolRoutes {
		var op struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		}
		if err := json.Unmarshal(d.Paths[path]["post"], &op); err != nil {
			t.Fatal(err)
		}
		ref := op.RequestBody.Content["application/json"].Schema.Ref
		const prefix = "#/components/schemas/"
		if len(ref) <= len(prefix) {
			t.Fatalf("%s: no request schema", path)
		}
		var body, input any
		if err := json.Unmarshal(d.Components.Schemas[ref[len(prefix):]], &body); err != nil {
			t.Fatal(err)
		}
		ib, _ := json.Marshal(interfaces.InputSchema(tool))
		if err := json.Unmarshal(ib, &input); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(body, input) {
			t.Errorf("%s: the /v1 body schema differs from the tool's input schema", tool)
		}
	}
}
