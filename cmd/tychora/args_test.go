package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReorderArgs: flags move in front of the positional arguments of the
// command that defines them, values stay with their flags, `--` is kept,
// and help COMMAND becomes COMMAND --help.
func TestReorderArgs(t *testing.T) {
	app := newApp(&env{})
	cases := []struct{ in, want string }{
		{"add /p --wait", "add --wait /p"},
		{"add --wait /p", "add --wait /p"},
		{"add /p --name n --wait", "add --name n --wait /p"},
		{"add /p --name=n", "add --name=n /p"},
		{"search q --budget 1000 --json", "search --budget 1000 --json q"},
		{"search q --path a --path b", "search --path a --path b q"},
		{"search q --json=false", "search --json=false q"},
		{"search -- -v flag", "search -- -v flag"},
		{"search --limit 3 -- -v --json", "search --limit 3 -- -v --json"},
		{"search q --workspace W", "--workspace W search q"},
		{"search q -w W --log-level debug", "-w W --log-level debug search q"},
		{"--workspace W search q", "--workspace W search q"},
		{"inspect coverage --json src_x", "inspect --json coverage src_x"},
		{"jobs list --limit 2 --json", "jobs list --limit 2 --json"},
		{"jobs get j --json", "jobs get --json j"},
		{"runs diff a b --json", "runs diff --json a b"},
		{"token create --grant read x", "token create --grant read x"},
		{"search q --bogus", "search --bogus q"},
		{"search q --budget", "search --budget q"},
		{"search - --json", "search --json -"},
		{"add /p --help", "add --help"},
		{"search -- --help", "search -- --help"},
		{"help", "--help"},
		{"help search", "search --help"},
		{"help jobs list", "jobs list --help"},
		{"jobs help list", "jobs list --help"},
		{"-w W help search", "-w W search --help"},
		{"nosuch --json", "--json nosuch"},
		{"", ""},
	}
	for _, tc := range cases {
		in := append([]string{"tychora"}, strings.Fields(tc.in)...)
		got := strings.Join(reorderArgs(app, in)[1:], " ")
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzReorderArgs: reordering only moves arguments (help COMMAND aside): it
// keeps every one of them, keeps `--`, and what follows it stays last and
// in order.
func FuzzReorderArgs(f *testing.F) {
	for _, s := range []string{"add /p --wait", "search q --budget 1000", "search -- -v flag", "jobs list --limit=2 x", "-w W search q -w", "inspect coverage --json SRC", "search --path a --path b"} {
		f.Add(s)
	}
	app := newApp(&env{})
	f.Fuzz(func(t *testing.T, line string) {
		in := append([]string{"tychora"}, strings.Split(line, " ")...)
		if slices.Contains(in, "help") || slices.Contains(in, "--help") || slices.Contains(in, "-h") {
			return
		}
		got := reorderArgs(app, in)
		a, b := slices.Clone(in), slices.Clone(got)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("%q became %q", in, got)
		}
		if i := slices.Index(in, "--"); i >= 0 {
			tail := in[i+1:]
			if !slices.Contains(got, "--") || len(got) < len(tail) || !slices.Equal(tail, got[len(got)-len(tail):]) {
				t.Fatalf("%q became %q: the arguments after -- moved", in, got)
			}
		}
	})
}

// TestFlagsAfterArguments runs the binary with flags after positional
// arguments, a repeated flag, a global flag after the command, a question
// that starts with a dash, and every form of help.
func TestFlagsAfterArguments(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, ".tychora")
	docs := filepath.Join(root, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "notes.md"), []byte("# Notes\n\nzorblax -v flag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", docs, "--wait", "--name", "docs"); r.code != 0 {
		t.Fatalf("add PATH --wait: %+v", r)
	}
	var srcs struct {
		Items []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"items"`
	}
	r := tychora(t, ws, "sources", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil || len(srcs.Items) != 1 {
		t.Fatalf("sources --json: %v %+v", err, r)
	}
	src := srcs.Items[0]
	if src.Name != "docs" {
		t.Fatalf("the source is %+v: --name after PATH was lost", src)
	}

	searches := [][]string{
		{"search", "zorblax", "--json", "--budget", "1000"},
		{"search", "--json", "zorblax", "--budget=1000"},
		{"search", "zorblax", "--path", "nothing/**", "--path", "**/*.md", "--json"},
		{"search", "zorblax", "--source", src.ID, "--json"},
	}
	for _, args := range searches {
		r := tychora(t, ws, args...)
		var res struct {
			Hits []json.RawMessage `json:"hits"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || len(res.Hits) != 1 {
			t.Errorf("%q: %v %+v", args, err, r)
		}
	}
	// A global flag after the command and its argument.
	cmd := exec.Command(binary, "search", "zorblax", "--json", "--workspace", ws)
	cmd.Dir = t.TempDir()
	if r := runCmd(t, cmd); r.code != 0 || !json.Valid([]byte(r.stdout)) {
		t.Errorf("search Q --json --workspace W: %+v", r)
	}
	// A question that starts with a dash, after --.
	if r := tychora(t, ws, "search", "--json", "--", "-v", "flag"); r.code != 0 || !strings.Contains(r.stdout, `"question":"-v flag"`) {
		t.Errorf("search -- -v flag: %+v", r)
	}
	if r := tychora(t, ws, "inspect", "coverage", "--json", src.ID); r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.Contains(r.stdout, `"source_id":"`+src.ID) {
		t.Errorf("inspect coverage --json SRC: %+v", r)
	}

	helps := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "tychora - fast"},
		{[]string{"--help"}, "tychora - fast"},
		{[]string{"help", "search"}, "tychora search - "},
		{[]string{"search", "--help"}, "tychora search - "},
		{[]string{"add", "/p", "--help"}, "tychora add - "},
		{[]string{"help", "jobs", "list"}, "tychora jobs list - "},
		{[]string{"jobs", "list", "--help"}, "tychora jobs list - "},
	}
	for _, h := range helps {
		r := tychora(t, ws, h.args...)
		if r.code != 0 || !strings.Contains(r.stdout, h.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", h.args, r.code, r.stdout, r.stderr)
		}
	}
}
