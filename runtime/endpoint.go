package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Endpoint states.
const (
	StateRunning  = "running"
	StateStopping = "stopping"
)

// Endpoint is the content of .runtime/endpoint.json (DESIGN §2).
type Endpoint struct {
	Version        int       `json:"version"`
	State          string    `json:"state"`
	WorkspaceID    string    `json:"workspace_id"`
	PID            int       `json:"pid"`
	URL            string    `json:"url"`
	MCPURL         string    `json:"mcp_url"`
	Token          string    `json:"token"`
	StartedAt      time.Time `json:"started_at"`
	TychoraVersion string    `json:"tychora_version"`
}

// maxEndpointBytes bounds what ReadEndpoint reads of a file it must not
// trust.
const maxEndpointBytes = 64 << 10

// WriteEndpoint publishes e atomically with mode 0600 inside the 0700
// runtime directory.
func WriteEndpoint(l workspace.Layout, e Endpoint) error {
	if err := l.EnsureDirs(); err != nil {
		return fmt.Errorf("write endpoint: %w", err)
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := workspace.WriteFileAtomic(l.Endpoint, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write endpoint: %w", err)
	}
	return nil
}

// ReadEndpoint reads endpoint.json. The answer is a claim, not a fact:
// ConnectLocal proves it before use. A missing file is fs.ErrNotExist.
func ReadEndpoint(l workspace.Layout) (Endpoint, error) {
	f, err := os.Open(l.Endpoint)
	if err != nil {
		return Endpoint{}, err
	}
	defer f.Close()
	var e Endpoint
	dec := json.NewDecoder(&limitedReader{f: f, n: maxEndpointBytes})
	if err := dec.Decode(&e); err != nil {
		return Endpoint{}, fmt.Errorf("read endpoint: %w", err)
	}
	if e.Version != 1 {
		return Endpoint{}, fmt.Errorf("read endpoint: unsupported version %d", e.Version)
	}
	return e, nil
}

type limitedReader struct {
	f *os.File
	n int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("endpoint.json is too large")
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.f.Read(p)
	r.n -= int64(n)
	return n, err
}

// RemoveEndpoint deletes endpoint.json; a missing file is fine.
func RemoveEndpoint(l workspace.Layout) error {
	if err := os.Remove(l.Endpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// pidAlive reports whether a process with pid exists.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
