package tychora_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tychora/tychora"

// layer is the package map of STYLE.md: a package may import only
// packages of a lower layer (never one of its own layer, never one above).
var layer = map[string]int{
	"workspace":              0,
	"sources":                1,
	"jobs":                   1,
	"query":                  2,
	"render":                 3,
	"interfaces":             4,
	"interfaces/servicetest": 5, // the shared behaviour suite, for tests
	"internal/testkit":       5, // the tests' shared helpers
	"interfaces/http":        5,
	"interfaces/mcp":         5,
	"interfaces/mcp/tape":    5,
	"runtime":                6,
	"cmd/tychora":            7,
}

// exempt packages live outside the map: benchmarks and tools, which may
// import anything but are imported by nothing.
func exempt(rel string) bool {
	return strings.HasPrefix(rel, "bench/") || strings.HasPrefix(rel, "interop/")
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := rel(fields[0])
		if pkg == "" || pkg == "." || exempt(pkg) {
			continue
		}
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s is not on the package map (STYLE.md): place it", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			dep := rel(imp)
			if dep == "" {
				continue
			}
			if exempt(dep) {
				t.Errorf("%s imports %s, which nothing may import", pkg, dep)
				continue
			}
			to, ok := layer[dep]
			if !ok {
				continue // reported for dep itself
			}
			if to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down the package map", pkg, from, dep, to)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("checked only %d packages: go list output looks wrong", seen)
	}
}

func rel(importPath string) string {
	if importPath == module {
		return "."
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return ""
	}
	return r
}

// noHTTP are the packages that know nothing of HTTP: statuses, headers
// and the scope header live in interfaces/http (and MCP's HTTP transport
// in interfaces/mcp).
var noHTTP = []string{"workspace", "jobs", "query", "render", "interfaces", "interfaces/servicetest"}

// TestNoHTTPBelowAdapters: the packages of noHTTP import net/http (or any
// package under it) neither in their code nor in their tests.
func TestNoHTTPBelowAdapters(t *testing.T) {
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`}
	for _, p := range noHTTP {
		args = append(args, "./"+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(noHTTP) {
		t.Fatalf("go list named %d packages, want %d", len(lines), len(noHTTP))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
				t.Errorf("%s imports %s: HTTP belongs to interfaces/http", rel(fields[0]), imp)
			}
		}
	}
}
