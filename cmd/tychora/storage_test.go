package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// entryPoint is one command that opens or creates a workspace.
type entryPoint struct {
	args []string
	op   string // "create" or "open": the start of the message
}

// openingCommands are the commands that open an existing workspace with
// no owner running: each becomes the owner for its run.
func openingCommands(src string) []entryPoint {
	return []entryPoint{
		{[]string{"serve"}, "open"},
		{[]string{"add", "--wait", src}, "open"},
		{[]string{"sync", "--wait", "src_0000"}, "open"},
		{[]string{"token", "create", "--grant", "read"}, "open"},
	}
}

// checkStorageRefusal runs each entry point and wants exit 1, nothing on
// stdout, and one error envelope with code whose message names the
// workspace and says what is wrong in tychora's words (what) rather than
// the file system's or SQLite's.
func checkStorageRefusal(t *testing.T, run func(ws string, args ...string) result, ws string, eps []entryPoint, code workspace.Code, what string) {
	t.Helper()
	for _, ep := range eps {
		r := run(ws, ep.args...)
		eb, ok := errorEnvelope(r.stderr)
		if r.code != 1 || r.stdout != "" || !ok {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", ep.args, r.code, r.stdout, r.stderr)
			continue
		}
		want := "cannot " + ep.op + " the workspace " + ws + ": "
		if eb.Error.Code != code || !strings.HasPrefix(eb.Error.Message, want) || !strings.Contains(eb.Error.Message, what) {
			t.Errorf("%v: %s %q; want %s %q...%q", ep.args, eb.Error.Code, eb.Error.Message, code, want, what)
		}
		for _, raw := range []string{"sqlite", "(13)", "(8)", "(14)", "mkdir", "open index", "owner lock", "create workspace", "permission denied", "no space left", "not a directory"} {
			if strings.Contains(strings.ToLower(eb.Error.Message), raw) {
				t.Errorf("%v: message %q shows %q", ep.args, eb.Error.Message, raw)
			}
		}
	}
}

// checkStdioRefusal starts serve --stdio on ws and wants a tool call to
// fail with a tool error holding code and the plain message.
func checkStdioRefusal(t *testing.T, ws string, code workspace.Code, what string) {
	t.Helper()
	cs, _ := stdioClient(t, t.Context(), ws)
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"request": map[string]any{"subject": "kinds"}}})
	if err != nil {
		t.Fatal(err)
	}
	var eb interfaces.ErrorBody
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			_ = json.Unmarshal([]byte(tc.Text), &eb)
		}
	}
	want := "cannot open the workspace " + ws + ": "
	if !res.IsError || eb.Error.Code != code || !strings.HasPrefix(eb.Error.Message, want) || !strings.Contains(eb.Error.Message, what) {
		b, _ := json.Marshal(res.Content)
		t.Errorf("serve --stdio: isError %v, %s; want %s %q...%q", res.IsError, b, code, want, what)
	}
}

// TestStorageErrorsInPlainWords: at every entry point that opens or
// creates a workspace (serve, init, add, sync, token create), a path
// through a file, a refused permission, a read-only file system and a full
// disk are typed errors in plain words naming the workspace.
func TestStorageErrorsInPlainWords(t *testing.T) {
	run := func(ws string, args ...string) result {
		return tychora(t, ws, args...)
	}

	t.Run("path through a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(file, ".tychora")
		checkStorageRefusal(t, run, ws, []entryPoint{{[]string{"init"}, "create"}, {[]string{"serve"}, "create"}},
			workspace.CodeInvalidArgument, "is a file where a directory must be")
	})

	t.Run("permission denied", func(t *testing.T) {
		// Root may write anywhere: as root the commands run as nobody.
		root := accessibleTempDir(t)
		asUser := func(ws string, args ...string) result {
			cmd := exec.Command(binary, append([]string{"--workspace", ws}, args...)...)
			cmd.Dir = root
			if os.Geteuid() == 0 {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			return runCmd(t, cmd)
		}
		locked := filepath.Join(root, "locked")
		if err := os.Mkdir(locked, 0o755); err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(locked, ".tychora")
		if r := tychora(t, ws, "init"); r.code != 0 {
			t.Fatal(r)
		}
		src := filepath.Join(locked, "src")
		makeTree(t, src, 3)
		// Readable, not writable: by its owner (0500) or, for nobody,
		// by anyone but root.
		for _, d := range []string{locked, ws, filepath.Join(ws, ".runtime")} {
			if err := os.Chmod(d, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o755) })
		}
		if r := asUser(ws, "status"); r.code != exitNoOwner {
			t.Fatalf("the workspace is not readable by the user the test runs as: %+v", r)
		}
		checkStorageRefusal(t, asUser, filepath.Join(locked, "new"), []entryPoint{{[]string{"init"}, "create"}, {[]string{"serve"}, "create"}},
			workspace.CodePermissionDenied, "not allowed to write there")
		checkStorageRefusal(t, asUser, ws, openingCommands(src), workspace.CodePermissionDenied, "not allowed to write there")
	})

	t.Run("read-only file system", func(t *testing.T) {
		root := t.TempDir()
		ws := filepath.Join(root, ".tychora")
		if r := tychora(t, ws, "init"); r.code != 0 {
			t.Fatal(r)
		}
		src := filepath.Join(root, "src")
		makeTree(t, src, 3)
		bindReadOnly(t, root)
		checkStorageRefusal(t, run, filepath.Join(root, "new"), []entryPoint{{[]string{"init"}, "create"}, {[]string{"serve"}, "create"}},
			workspace.CodeUnavailable, "read-only file system")
		checkStorageRefusal(t, run, ws, openingCommands(src), workspace.CodeUnavailable, "read-only file system")
		checkStdioRefusal(t, ws, workspace.CodeUnavailable, "read-only file system")
	})

	t.Run("disk full", func(t *testing.T) {
		root := mountTmpfs(t, 1<<20)
		ws := filepath.Join(root, ".tychora")
		if r := tychora(t, ws, "init"); r.code != 0 {
			t.Fatal(r)
		}
		src := filepath.Join(root, "src")
		makeTree(t, src, 3)
		fillDisk(t, root)
		checkStorageRefusal(t, run, ws, openingCommands(src), workspace.CodeUnavailable, "the disk is full")
		checkStdioRefusal(t, ws, workspace.CodeUnavailable, "the disk is full")
		checkStorageRefusal(t, run, filepath.Join(root, "new"), []entryPoint{{[]string{"init"}, "create"}},
			workspace.CodeUnavailable, "the disk is full")
	})
}

// accessibleTempDir is a temporary directory that another user can reach
// (t.TempDir's are 0700 down from the test's own), with the test binary's.
func accessibleTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir), filepath.Dir(binary)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// bindReadOnly makes dir read-only by binding it onto itself read-only,
// until the test ends; it skips the test where mounts are not allowed.
func bindReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount (%v): a read-only file system needs CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only (%v)", err)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory until the test
// ends; it skips the test where mounts are not allowed.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): a full disk needs CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// fillDisk writes a file under dir until the file system has no space
// left.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("%s not full: %d blocks free (%v)", dir, st.Bavail, err)
	}
}
