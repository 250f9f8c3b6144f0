package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestIngestKnowsFilesByName: an added folder's README.C++ and README.C
// are indexed as text, and files known by name (Makefile, GNUmakefile,
// Dockerfile and its variants, BUILD, CMakeLists.txt) get their language,
// as inspect coverage shows.
func TestIngestKnowsFilesByName(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, ".tychora")
	proj := filepath.Join(root, "proj")
	files := map[string]string{
		"README.C++":     "Notes on the C++ port.\n\nBuild it with make.\n",
		"Makefile":       "all:\n\tcc -o app main.c\n",
		"BUILD":          "cc_binary(name = \"app\", srcs = [\"main.c\"])\n",
		"CMakeLists.txt": "project(app)\nadd_executable(app main.c)\n",
		"Dockerfile":     "FROM alpine\nCOPY app /app\n",
		"Dockerfile.dev": "FROM alpine\nRUN apk add make\n",
		"Containerfile":  "FROM alpine\n",
		"GNUmakefile":    "all:\n\tcc main.c\n",
		"README.C":       "Notes on the C port.\n",
		"main.c":         "int main(void) { return 0; }\n",
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", "--wait", proj); r.code != 0 {
		t.Fatal(r)
	}
	var srcs struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if r := tychora(t, ws, "sources", "--json"); json.Unmarshal([]byte(r.stdout), &srcs) != nil || len(srcs.Items) != 1 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "inspect", "--json", "coverage", srcs.Items[0].ID)
	var cov struct {
		Result struct {
			Items []struct {
				Path     string  `json:"path"`
				Status   string  `json:"status"`
				Kind     *string `json:"kind"`
				Language *string `json:"language"`
			} `json:"items"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &cov); err != nil {
		t.Fatal(err, r)
	}
	want := map[string][2]string{
		"README.C++":     {"text", ""},
		"Makefile":       {"code", "make"},
		"BUILD":          {"code", "starlark"},
		"CMakeLists.txt": {"code", "cmake"},
		"Dockerfile":     {"code", "dockerfile"},
		"Dockerfile.dev": {"code", "dockerfile"},
		"Containerfile":  {"code", "dockerfile"},
		"GNUmakefile":    {"code", "make"},
		"README.C":       {"text", ""},
		"main.c":         {"code", "c"},
	}
	seen := 0
	for _, it := range cov.Result.Items {
		w, ok := want[it.Path]
		if !ok {
			continue
		}
		seen++
		kind, lang := "", ""
		if it.Kind != nil {
			kind = *it.Kind
		}
		if it.Language != nil {
			lang = *it.Language
		}
		if it.Status != "indexed" || kind != w[0] || lang != w[1] {
			t.Errorf("%s: %s as %q/%q, want indexed as %q/%q", it.Path, it.Status, kind, lang, w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Errorf("coverage lists %d of the %d files: %s", seen, len(want), r.stdout)
	}
}
