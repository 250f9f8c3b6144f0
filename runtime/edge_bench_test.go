package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/jobs"
)

// BenchmarkEdgeSearchWarm measures one warm search through each edge of a
// real owner, as a client sees it: "mcp" is a tools/call over Streamable
// HTTP from the go-sdk client (protocol 2025-11-25, one session), "v1" a
// POST /v1/search; the arguments are decoded and checked against the
// schema, the cached ranking fitted to 1,000 tokens, and the answer sent.
//
//	go test -run '^$' -bench EdgeSearchWarm -benchmem ./runtime/
func BenchmarkEdgeSearchWarm(b *testing.B) {
	// Every function scores apart (its own count of "header" and its own
	// length), so that each owner ranks and fits the same answer: with
	// ties, the random ids of a new index would order them, and each
	// run would time another answer.
	own, tree := benchOwner(b, 300, func(i int) (string, string) {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package pkg%02d\n\n", i%30)
		for f := range 12 {
			fmt.Fprintf(&sb, "// Parse%d_%d reads the request%s and returns its value,\n// or an error when it is malformed.\n// %s\nfunc Parse%d_%d(r *Request) (string, error) {\n",
				i, f, strings.Repeat(" header", 1+i%10), strings.Repeat("pad ", f+12*(i/10)), i, f)
			sb.WriteString("\treturn \"\", errMalformed\n}\n\n")
		}
		return fmt.Sprintf("pkg%02d/file%03d.go", i%30, i), sb.String()
	})
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		j, err := svc.GetJob(ctx, res.Job.ID)
		if err != nil {
			b.Fatal(err)
		}
		if j.Job.State == jobs.StateSucceeded {
			break
		}
		if j.Job.State == jobs.StateFailed || time.Now().After(deadline) {
			b.Fatalf("ingest: %+v", j.Job)
		}
		time.Sleep(20 * time.Millisecond)
	}
	args := json.RawMessage(`{"request":{"question":"request header malformed","budget":{"max_tokens":1000}}}`)
	hc := &http.Client{Transport: testkit.Bearer{Token: own.Token()}}

	b.Run("mcp", func(b *testing.B) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: own.URL() + "/mcp/", HTTPClient: hc, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		call := func() {
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: args})
			if err != nil || r.IsError || r.StructuredContent == nil {
				b.Fatalf("search: %v %+v", err, r)
			}
		}
		call()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			call()
		}
	})
	b.Run("v1", func(b *testing.B) {
		call := func() {
			resp, err := hc.Post(own.URL()+"/v1/search", "application/json", bytes.NewReader(args))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"used_tokens"`)) {
				b.Fatalf("search: %d %s", resp.StatusCode, body)
			}
		}
		call()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			call()
		}
	})
}
