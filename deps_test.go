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
