package sources

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestKindsRegistry(t *testing.T) {
	kinds := Kinds()
	want := []string{KindCode, KindData, KindHTML, KindImage, KindMarkdown, KindText, KindVision}
	if len(kinds) != len(want) {
		t.Fatalf("got %d kinds, want %d", len(kinds), len(want))
	}
	for i, k := range kinds {
		if k.ID != want[i] {
			t.Errorf("kind %d = %q, want %q", i, k.ID, want[i])
		}
		// Vision evidence comes from submissions, not from files of its own.
		noFiles := k.ID == KindVision
		if k.Description == "" || (len(k.Extensions) == 0) != noFiles || len(k.Facets) == 0 || len(k.Levels) == 0 || len(k.Channels) == 0 {
			t.Errorf("kind %q is incomplete: %+v", k.ID, k)
		}
		for _, f := range k.Facets {
			if f.Name == "" || f.Description == "" {
				t.Errorf("kind %q: incomplete facet %+v", k.ID, f)
			}
		}
		got, ok := KindByID(k.ID)
		if !ok || got.ID != k.ID {
			t.Errorf("KindByID(%q) = %v, %v", k.ID, got.ID, ok)
		}
	}
	if _, ok := KindByID("nope"); ok {
		t.Error("KindByID(nope) found something")
	}
	// The registry is not changed through a returned copy.
	kinds[0].Extensions[0] = "changed"
	kinds[0].Facets[0].Name = "changed"
	if k, _ := KindByID(kinds[0].ID); k.Extensions[0] == "changed" || k.Facets[0].Name == "changed" {
		t.Error("Kinds returned the registry itself")
	}
}

func TestKindDefJSON(t *testing.T) {
	k, _ := KindByID(KindMarkdown)
	data, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, key := range []string{`"id":"markdown"`, `"description"`, `"extensions":[`, `"languages":["markdown"]`, `"extractor":"markdown"`,
		`"extractor_version":"` + markdownExtractorVersion + `"`, `"levels"`, `"channels"`, `"verbatim_text":true`, `"facets":[`, `"name":"has_code_blocks"`, `"values":["true","false"]`} {
		if !strings.Contains(s, key) {
			t.Errorf("JSON lacks %s: %s", key, s)
		}
	}
	if strings.ContainsAny(strings.Join(jsonKeys(t, data), ""), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t.Errorf("JSON keys are not snake_case: %s", s)
	}
}

func jsonKeys(t *testing.T, data []byte) []string {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func TestExtractorFor(t *testing.T) {
	tests := []struct {
		path, lang string
		kind       string // "" for no extractor
		extractor  string
	}{
		{"a.md", "", KindMarkdown, "markdown"},
		{"a.go", "", KindCode, "code"},
		{"a.go", LangGo, KindCode, "code"},
		{"tool", LangPython, KindCode, "code"},
		{"a.html", "", KindHTML, "html"},
		{"a.txt", "", KindText, "text"},
		{"LICENSE", "", KindText, "text"},
		{"a.json", "", KindData, "text"},
		{"a.yaml", "", KindData, "text"},
		{"a.vue", "", KindCode, "code"},
		{"a.png", "", "", ""},
		{"A.JPG", "", "", ""},
	}
	for _, tt := range tests {
		x := ExtractorFor(tt.path, tt.lang)
		if tt.extractor == "" {
			if x != nil {
				t.Errorf("ExtractorFor(%q) = %s, want nil", tt.path, x.Name())
			}
			if k := KindFor(tt.path, tt.lang); k != KindImage {
				t.Errorf("KindFor(%q) = %q, want image", tt.path, k)
			}
			continue
		}
		if x == nil {
			t.Errorf("ExtractorFor(%q, %q) = nil", tt.path, tt.lang)
			continue
		}
		if x.Name() != tt.extractor || x.Version() == "" {
			t.Errorf("ExtractorFor(%q) = %s@%s, want %s", tt.path, x.Name(), x.Version(), tt.extractor)
		}
		ex, err := x.Extract(tt.path, "hello\n")
		if err != nil {
			t.Fatal(err)
		}
		if ex.Kind != tt.kind || KindFor(tt.path, tt.lang) != tt.kind {
			t.Errorf("%q: kind %q (KindFor %q), want %q", tt.path, ex.Kind, KindFor(tt.path, tt.lang), tt.kind)
		}
		def, ok := KindByID(ex.Kind)
		if !ok {
			t.Fatalf("kind %q not registered", ex.Kind)
		}
		if def.Extractor != x.Name() || def.ExtractorVersion != x.Version() {
			t.Errorf("kind %q names extractor %s@%s, got %s@%s", def.ID, def.Extractor, def.ExtractorVersion, x.Name(), x.Version())
		}
		for name := range ex.Facets {
			found := false
			for _, f := range def.Facets {
				found = found || f.Name == name
			}
			if !found {
				t.Errorf("%q: facet %q is not declared by kind %q", tt.path, name, def.ID)
			}
		}
	}
}
