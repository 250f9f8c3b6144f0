// Command coldstart measures the time from starting `tychora serve
// --stdio` to the first tools/list answer, with the go-sdk client: on a new
// workspace, on an existing one, and on one whose owner must resume a large
// pending ingest (which must not delay the answer).
//
//	go run ./bench/cmd/coldstart -bin /path/to/tychora -n 30
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "", "the tychora binary")
	n := flag.Int("n", 30, "starts per scenario")
	target := flag.Duration("target", 50*time.Millisecond, "p50 bound; exit 1 when missed")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "coldstart: -bin is required")
		os.Exit(2)
	}
	root, err := os.MkdirTemp("", "tychora-coldstart")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(root)

	existing := filepath.Join(root, "existing", ".tychora")
	run(*bin, existing, "--workspace", existing, "init")

	// A workspace with a large ingest queued: the owner resumes it at
	// start.
	busy := filepath.Join(root, "busy", ".tychora")
	tree := filepath.Join(root, "busy", "tree")
	for i := 0; i < 20000; i++ {
		p := filepath.Join(tree, fmt.Sprintf("d%03d", i%200), fmt.Sprintf("f%05d.md", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(fmt.Sprintf("# %d\n\n%s\n", i, strings.Repeat("words to index ", 50))), 0o644)
	}
	run(*bin, busy, "--workspace", busy, "init")

	ok := true
	for _, sc := range []struct {
		name  string
		setup func(i int) string
	}{
		{"new workspace", func(i int) string { return filepath.Join(root, fmt.Sprintf("new%d", i), ".tychora") }},
		{"existing workspace", func(int) string { return existing }},
		{"pending 20k-file ingest", func(i int) string {
			// Queue the add through a short-lived owner that exits at once.
			if i == 0 {
				cmd := exec.Command(*bin, "--workspace", busy, "serve", "--stdio")
				cmd.Stdin = strings.NewReader("")
				_ = cmd.Run()
			}
			return busy
		}},
	} {
		var ds []time.Duration
		for i := 0; i < *n; i++ {
			ws := sc.setup(i)
			if sc.name == "pending 20k-file ingest" {
				queueAdd(*bin, ws, tree)
			}
			ds = append(ds, once(*bin, ws))
		}
		slices.Sort(ds)
		p50, p99 := ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
		fmt.Printf("%-26s n=%d  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n", sc.name, len(ds), ms(p50), ms(p99), ms(ds[len(ds)-1]))
		if p50 > *target {
			ok = false
		}
	}
	if !ok {
		fmt.Printf("coldstart: p50 over %s\n", *target)
		os.Exit(1)
	}
}

// queueAdd leaves an add job queued (not run) in ws: it adds the tree
// through the CLI with an owner that is killed right after.
func queueAdd(bin, ws, tree string) {
	cmd := exec.Command(bin, "--workspace", ws, "serve")
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(filepath.Join(ws, ".runtime", "endpoint.json")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = exec.Command(bin, "--workspace", ws, "add", "--json", tree).Run()
}

// once starts serve --stdio and times initialize + tools/list.
func once(bin, ws string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "--workspace", ws, "serve", "--stdio")
	client := mcp.NewClient(&mcp.Implementation{Name: "coldstart", Version: "1"}, nil)
	t0 := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fail(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		fail(err)
	}
	d := time.Since(t0)
	_ = cs.Close()
	return d
}

func run(bin, ws string, args ...string) {
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		fail(fmt.Errorf("%v: %v %s", args, err, out))
	}
	_ = ws
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
