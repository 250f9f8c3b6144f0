package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// guidePath is docs/guide.md, from this package's directory.
const guidePath = "../../docs/guide.md"

// guideLine is one line of an sh block of the guide.
type guideLine struct {
	n    int // line number in the file
	text string
}

// guideBlocks reads the lines of the guide's sh blocks, in order, and the
// tychora commands quoted in its text (outside any block).
func guideBlocks(t *testing.T) (lines []guideLine, quoted []string) {
	t.Helper()
	b, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	inline := regexp.MustCompile("`(tychora [^`]+)`")
	fence := ""
	for i, l := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			if fence == "" {
				fence = strings.TrimPrefix(trimmed, "```")
				if fence == "" {
					fence = "text"
				}
			} else {
				fence = ""
			}
			continue
		}
		switch {
		case fence == "sh" && trimmed != "":
			lines = append(lines, guideLine{i + 1, trimmed})
		case fence == "":
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				quoted = append(quoted, m[1])
			}
		}
	}
	if fence != "" {
		t.Fatalf("%s: a fenced block is not closed", guidePath)
	}
	return lines, quoted
}

// TestGuideCommands runs every line of the guide's sh blocks, in order, in
// a fresh project with the built tychora first on PATH, and checks that
// each exits 0. "tychora serve" starts an owner in the background, as a
// terminal of its own would; the comment "Ctrl-C where tychora serve runs"
// stops it. $SOURCE_ID and $TOKEN_ID are what a reader would copy from
// tychora sources and tychora token list.
func TestGuideCommands(t *testing.T) {
	lines, quoted := guideBlocks(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	for dir, files := range map[string]map[string]string{
		home: {},
		proj: {
			"README.md":      "# Demo\n\nThe configuration is read from config.toml at start.\n",
			"main.go":        "package main\n\n// parseRequest parses a request line.\nfunc parseRequest(line string) string { return line }\n\nfunc main() {}\n",
			"config.toml":    "name = \"demo\"\n",
			"screenshot.png": string(visionPNG),
		},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := []string{"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir()}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = proj, env
		return cmd
	}
	idOf := func(args []string, list, name string) string {
		t.Helper()
		r := runCmd(t, command(binary, args...))
		var body map[string]json.RawMessage
		var items []map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &body) != nil || json.Unmarshal(body[list], &items) != nil {
			t.Fatalf("%q: %+v", args, r)
		}
		for _, it := range items {
			if n, _ := it["name"].(string); name == "" || n == name {
				id, _ := it["id"].(string)
				return id
			}
		}
		t.Fatalf("%q lists no %q: %s", args, name, r.stdout)
		return ""
	}

	var owner *exec.Cmd
	stopOwner := func() {
		if owner != nil {
			stopServe(t, owner)
			owner = nil
		}
	}
	defer stopOwner()
	ran := 0
	for _, l := range lines {
		if strings.HasPrefix(l.text, "#") {
			if strings.Contains(l.text, "Ctrl-C where tychora serve runs") {
				stopOwner()
			}
			continue
		}
		if strings.HasPrefix(l.text, "tychora ") {
			ran++
		}
		if l.text == "tychora serve" {
			owner = startGuideOwner(t, command(binary, "serve"))
			continue
		}
		vars := append([]string(nil), env...)
		if strings.Contains(l.text, "$SOURCE_ID") {
			vars = append(vars, "SOURCE_ID="+idOf([]string{"sources", "--json"}, "items", ""))
		}
		if strings.Contains(l.text, "$SELECTION_ID") {
			vars = append(vars, "SELECTION_ID="+selectionOf(t, command(binary, "inspect", "--json", "source_selections",
				idOf([]string{"sources", "--json"}, "items", ""))))
		}
		if strings.Contains(l.text, "$TOKEN_ID") {
			vars = append(vars, "TOKEN_ID="+idOf([]string{"token", "list", "--json"}, "tokens", "second-agent"))
		}
		cmd := command("bash", "-euo", "pipefail", "-c", l.text)
		cmd.Env = vars
		if r := runCmd(t, cmd); r.code != 0 {
			t.Errorf("guide.md:%d: %s: exit %d\nstdout %s\nstderr %s", l.n, l.text, r.code, r.stdout, r.stderr)
		}
	}
	if ran < 20 {
		t.Fatalf("ran %d tychora commands of the guide; its blocks were not found", ran)
	}
	// The commands quoted in the text name commands and flags that exist.
	for _, q := range quoted {
		if err := checkCommandLine(strings.Fields(strings.TrimPrefix(q, "tychora "))); err != "" {
			t.Errorf("guide.md quotes %q: %s", q, err)
		}
	}
}

// checkCommandLine reports what in args (a tychora command line without
// the program name) is not a command or flag of the real CLI; "" when all
// is.
func checkCommandLine(args []string) string {
	app := newApp(&env{stdout: io.Discard, stderr: io.Discard})
	// flags maps each flag's name to whether it takes a value.
	flags := map[string]bool{"help": false, "version": false}
	addFlags := func(fs []cli.Flag) {
		for _, f := range fs {
			_, isBool := f.(*cli.BoolFlag)
			for _, n := range f.Names() {
				flags[n] = !isBool
			}
		}
	}
	addFlags(app.Flags)
	cmds := app.Commands
	named, value := false, false
	for _, a := range args {
		if value {
			value = false
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, hasValue := strings.Cut(name, "=")
			takesValue, known := flags[name]
			if !known {
				return "no flag --" + name
			}
			value = takesValue && !hasValue
			continue
		}
		if len(cmds) == 0 {
			continue // an argument, or a flag's value
		}
		var found *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				found = c
			}
		}
		if found == nil {
			if !named {
				return "no command " + a
			}
			return "no subcommand " + a
		}
		named = true
		addFlags(found.Flags)
		cmds = found.Subcommands
	}
	return ""
}

// startGuideOwner starts the owner cmd and waits until it listens.
func startGuideOwner(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("tychora serve did not start")
	}
	return cmd
}

// selectionOf is the id of the first selection that cmd (an inspect
// source_selections --json) lists.
func selectionOf(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	r := runCmd(t, cmd)
	var body struct {
		Result struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		} `json:"result"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &body) != nil || len(body.Result.Items) == 0 {
		t.Fatalf("inspect source_selections: %+v", r)
	}
	return body.Result.Items[0].ID
}
