package mcpapi_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
)

// walkObjects calls f on every schema of an object with properties.
func walkObjects(s *jsonschema.Schema, path string, f func(path string, s *jsonschema.Schema)) {
	if s == nil {
		return
	}
	if s.Properties != nil {
		f(path, s)
	}
	for name, p := range s.Properties {
		walkObjects(p, path+"."+name, f)
	}
	walkObjects(s.Items, path+"[]", f)
	walkObjects(s.AdditionalProperties, path+"{}", f)
}

func TestInputSchemasAreClosed(t *testing.T) {
	for _, tool := range interfaces.ToolNames() {
		s := interfaces.InputSchema(tool)
		if s == nil || s.Type != "object" {
			t.Fatalf("%s: input schema %v, want type object", tool, s)
		}
		n := 0
		walkObjects(s, tool, func(path string, o *jsonschema.Schema) {
			n++
			if o.AdditionalProperties == nil || o.AdditionalProperties.Not == nil {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			if o.Type != "object" {
				t.Errorf("%s: type %q %v, want object (inputs take no null)", path, o.Type, o.Types)
			}
		})
		if n == 0 {
			t.Errorf("%s: no object levels found", tool)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: marshal: %v", tool, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["additionalProperties"] != false {
			t.Errorf("%s: wire schema has additionalProperties %v", tool, m["additionalProperties"])
		}
	}
}

func TestOutputSchemasAreObjects(t *testing.T) {
	for _, tool := range interfaces.ToolNames() {
		s := interfaces.OutputSchema(tool)
		if s == nil || s.Type != "object" {
			t.Fatalf("%s: output schema %v, want type object at the root", tool, s)
		}
	}
	if interfaces.InputSchema("nope") != nil || interfaces.OutputSchema("nope") != nil {
		t.Error("an unknown tool has a schema")
	}
}

func TestSchemasAreCopies(t *testing.T) {
	s := interfaces.InputSchema(interfaces.ToolSearch)
	s.Properties["request"] = nil
	if interfaces.InputSchema(interfaces.ToolSearch).Properties["request"] == nil {
		t.Fatal("changing a returned schema changed the served one")
	}
	all := interfaces.Schemas()
	delete(all, "QueryResult")
	if _, ok := interfaces.Schemas()["QueryResult"]; !ok {
		t.Fatal("Schemas shares its map")
	}
}

func TestSchemaNames(t *testing.T) {
	names := interfaces.SchemaNames()
	for _, want := range []string{"DiscoverArgs", "SearchArgs", "InspectArgs", "AddSourcesRequest", "ManageJobRequest",
		"DiscoverResult", "QueryResult", "InspectResult", "JobResult", "ManageJobResult",
		"QueryRequest", "SourceInput", "JobHandle", "Evidence", "EvidenceResult", "KindDefinition", "ErrorBody"} {
		if !slices.Contains(names, want) {
			t.Errorf("no schema %s in %v", want, names)
		}
	}
	for name, s := range interfaces.Schemas() {
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s does not resolve: %v", name, err)
		}
	}
}

// validate checks that v, as JSON, matches the output schema of tool.
func validate(t testing.TB, tool string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	validateJSON(t, tool, b)
}

func validateJSON(t testing.TB, tool string, b []byte) {
	t.Helper()
	rs, err := interfaces.OutputSchema(tool).Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("%s output %s does not match its schema: %v", tool, b, err)
	}
}

func TestOutputSchemasMatchResults(t *testing.T) {
	now := time.Now().UTC()
	cursor := "c1"
	job := jobs.Job{ID: "j1", Kind: jobs.KindAdd, State: jobs.StateFailed, SourceID: "s1", CollectionID: "default",
		Attempt: 2, Error: &jobs.JobError{Code: "INTERNAL", Message: "boom"}, CreatedAt: now, StartedAt: &now, FinishedAt: &now}
	text := "body"
	validate(t, interfaces.ToolDiscover, interfaces.DiscoverResult{Subject: "sources", Items: []json.RawMessage{json.RawMessage(`{"id":"s1"}`)}})
	validate(t, interfaces.ToolDiscover, interfaces.DiscoverResult{Subject: "kinds", Items: []json.RawMessage{}, NextCursor: &cursor})
	validate(t, interfaces.ToolSearch, query.QueryResult{})
	validate(t, interfaces.ToolSearch, query.QueryResult{RunID: "r", Hits: []query.Hit{{EvidenceID: "e", HeadingPath: []string{"a"}, Text: &text}}, NextCursor: &cursor})
	validate(t, interfaces.ToolInspect, interfaces.InspectResult{Result: json.RawMessage(`{"x":1}`)})
	validate(t, interfaces.ToolAddSources, interfaces.JobResult{Job: job})
	validate(t, interfaces.ToolAddSources, interfaces.JobResult{Job: jobs.Job{ID: "j", State: jobs.StateQueued, CreatedAt: now}})
	validate(t, interfaces.ToolManageJob, interfaces.ManageJobResult{Job: &job})
	validate(t, interfaces.ToolManageJob, interfaces.ManageJobResult{Jobs: []jobs.Job{job}, NextCursor: &cursor})
	validate(t, interfaces.ToolManageJob, interfaces.ManageJobResult{})
}
