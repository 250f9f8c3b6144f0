package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// tychoraAt runs the built binary in dir with no --workspace, and with
// $TYCHORA_WORKSPACE set to envWS (unset when empty).
func tychoraAt(t *testing.T, dir, envWS string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, workspace.EnvWorkspace+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if envWS != "" {
		cmd.Env = append(cmd.Env, workspace.EnvWorkspace+"="+envWS)
	}
	return runCmd(t, cmd)
}

// TestWorkspaceFoundInParent: run from a subfolder, a command finds the
// .tychora of the project above it; init still creates ./.tychora; with
// no workspace anywhere the error says where it looked.
func TestWorkspaceFoundInParent(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	deep := filepath.Join(proj, "sub", "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "notes.md"), []byte("# Notes\n\nquibbleton\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := tychoraAt(t, proj, "", "init"); r.code != 0 {
		t.Fatal(r)
	}
	ws := filepath.Join(proj, ".tychora")
	if r := tychoraAt(t, deep, "", "add", "notes.md", "--wait"); r.code != 0 {
		t.Fatalf("add from a subfolder: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(deep, ".tychora")); !os.IsNotExist(err) {
		t.Fatalf("add from a subfolder created a second workspace (%v)", err)
	}
	if r := tychoraAt(t, filepath.Join(proj, "sub"), "", "search", "quibbleton", "--json"); r.code != 0 || !strings.Contains(r.stdout, "notes.md") {
		t.Fatalf("search from a subfolder: %+v", r)
	}
	// $TYCHORA_WORKSPACE and --workspace come before the search.
	elsewhere := t.TempDir()
	if r := tychoraAt(t, elsewhere, ws, "search", "quibbleton", "--json"); r.code != 0 || !strings.Contains(r.stdout, "notes.md") {
		t.Fatalf("search with $%s: %+v", workspace.EnvWorkspace, r)
	}
	missing := filepath.Join(elsewhere, "nope")
	r := tychoraAt(t, deep, "", "--workspace", missing, "sources")
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || eb.Error.Code != workspace.CodeNotFound || !strings.Contains(eb.Error.Message, missing+", which --workspace names") {
		t.Errorf("--workspace that does not exist: %+v", r)
	}
	r = tychoraAt(t, deep, missing, "sources")
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || !strings.Contains(eb.Error.Message, "$"+workspace.EnvWorkspace+" names") {
		t.Errorf("$%s that does not exist: %+v", workspace.EnvWorkspace, r)
	}

	// No workspace here or above: the error names what and where, and
	// nothing is created.
	lone := filepath.Join(elsewhere, "lone")
	if err := os.Mkdir(lone, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sources"}, {"search", "x"}, {"add", "."}} {
		r := tychoraAt(t, lone, "", args...)
		eb, ok := errorEnvelope(r.stderr)
		want := "no workspace: looked for .tychora in " + lone + " and its parents"
		if r.code != 1 || !ok || eb.Error.Code != workspace.CodeNotFound || !strings.Contains(eb.Error.Message, want) {
			t.Errorf("%q without a workspace: %+v (want %q)", args, r, want)
		}
	}
	if r := tychoraAt(t, lone, "", "status"); r.code != exitNoOwner || !strings.Contains(r.stderr, "looked for .tychora in "+lone) {
		t.Errorf("status without a workspace: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(lone, ".tychora")); !os.IsNotExist(err) {
		t.Fatalf("a command without a workspace created one (%v)", err)
	}

	// init in a subfolder creates ./.tychora there, as git init does.
	if r := tychoraAt(t, deep, "", "init"); r.code != 0 || !workspace.NewLayout(filepath.Join(deep, ".tychora")).Exists() {
		t.Fatalf("init in a subfolder: %+v", r)
	}
	if err := os.RemoveAll(filepath.Join(deep, ".tychora")); err != nil {
		t.Fatal(err)
	}

	// The search does not enter a directory that another user owns.
	if os.Getuid() == 0 {
		if err := os.Chown(proj, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		r := tychoraAt(t, deep, "", "sources")
		want := "up to " + filepath.Join(proj, "sub") + " (" + proj + " belongs to another user)"
		if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || !strings.Contains(eb.Error.Message, want) {
			t.Errorf("a workspace in another user's directory was used: %+v (want %q)", r, want)
		}
	}
}
