package tape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// The names of a tape's files, and of the workspace folder that holds
// tapes.
const (
	DirName   = "tapes"
	MetaFile  = "meta.json"
	TraceFile = "trace.jsonl"
	// FormatVersion is the version of meta.json and trace.jsonl.
	FormatVersion = 1
	// MaxLine is the longest trace line the reader takes: a message of
	// max_request_bytes' cap or a result of the 4 MiB cap, with its echo.
	MaxLine = 32 << 20
)

// Direction says who sent a message.
type Direction string

const (
	FromClient Direction = "c2s"
	FromServer Direction = "s2c"
)

// Kind is what a message is in JSON-RPC.
type Kind string

const (
	KindRequest      Kind = "request"
	KindNotification Kind = "notification"
	KindResponse     Kind = "response"
	KindError        Kind = "error"   // a response carrying a JSON-RPC error
	KindInvalid      Kind = "invalid" // a line that is no JSON-RPC message (kept as a string)
)

// Echo is the request a response answers, repeated on the response's line
// so that every line stands alone.
type Echo struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Event is one line of trace.jsonl: one message as it crossed the wire.
type Event struct {
	Seq  int       `json:"seq"`
	AtMS float64   `json:"at_ms"` // milliseconds since the recording started
	Dir  Direction `json:"dir"`
	Kind Kind      `json:"kind"`
	// ID is the JSON-RPC id as sent (requests and responses).
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"` // requests and notifications
	// Tool is the tool a tools/call names, on the request and its response.
	Tool string `json:"tool,omitempty"`
	// Payload is the message, redacted; a string for a KindInvalid line.
	Payload json.RawMessage `json:"payload"`
	// Echo and MS are set on responses: the request answered and the
	// milliseconds it took.
	Echo *Echo   `json:"echo,omitempty"`
	MS   float64 `json:"ms,omitempty"`
	// Batch is the 1-based position of a message sent in a JSON-RPC batch.
	Batch int `json:"batch,omitempty"`
}

// Counts are the numbers of messages a tape holds.
type Counts struct {
	Messages       int `json:"messages"`
	Requests       int `json:"requests"`
	Responses      int `json:"responses"`
	Notifications  int `json:"notifications"`
	Errors         int `json:"errors"`
	ServerRequests int `json:"server_requests"` // requests the server sent the client
	Invalid        int `json:"invalid"`
}

// Meta is meta.json.
type Meta struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	// Server is what was recorded: "tychora VERSION serve --stdio" or the
	// command line tape rec started.
	Server          string    `json:"server"`
	TychoraVersion  string    `json:"tychora_version"`
	ProtocolVersion string    `json:"protocol_version,omitempty"`
	Client          string    `json:"client,omitempty"` // clientInfo name and version
	StartedAt       time.Time `json:"started_at"`
	EndedAt         time.Time `json:"ended_at,omitzero"`
	Counts          Counts    `json:"counts"`
}

// Tape is a loaded recording.
type Tape struct {
	Dir    string
	Meta   Meta
	Events []Event
}

var tapeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidName reports whether name may name a tape: letters, digits, '.',
// '_' and '-', starting with a letter or digit, at most 128 bytes.
func ValidName(name string) bool { return tapeName.MatchString(name) }

// CheckName is ValidName as an INVALID_ARGUMENT error.
func CheckName(name string) error {
	if !ValidName(name) {
		return workspace.Errorf(workspace.CodeInvalidArgument, "tape name %q: use letters, digits, '.', '_' or '-', starting with a letter or digit (at most 128)", workspace.Clip(name, 64))
	}
	return nil
}

// Resolve is the directory of the tape ref names: a name is looked up in
// WORKSPACE/tapes, and a ref holding a path separator is a tape directory.
func Resolve(workspaceDir, ref string) (string, error) {
	if strings.ContainsRune(ref, filepath.Separator) || strings.ContainsRune(ref, '/') {
		return filepath.Clean(ref), nil
	}
	if err := CheckName(ref); err != nil {
		return "", err
	}
	return filepath.Join(workspaceDir, DirName, ref), nil
}

// Load reads the tape in dir: its meta.json and its trace.
func Load(dir string) (*Tape, error) {
	t := &Tape{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, workspace.Errorf(workspace.CodeNotFound, "no tape at %s (tychora tape ls lists the tapes)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read tape: %w", err)
	}
	if err := json.Unmarshal(b, &t.Meta); err != nil {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: not valid JSON: %v", filepath.Join(dir, MetaFile), err)
	}
	if t.Meta.Version != FormatVersion {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: format version %d, this tychora reads %d", filepath.Join(dir, MetaFile), t.Meta.Version, FormatVersion)
	}
	f, err := os.Open(filepath.Join(dir, TraceFile))
	if err != nil {
		return nil, fmt.Errorf("read tape: %w", err)
	}
	defer f.Close()
	t.Events, err = ReadTrace(f)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeInvalidArgument, err, filepath.Join(dir, TraceFile)+": "+err.Error())
	}
	return t, nil
}

// ReadTrace reads trace.jsonl: one event a line, each a JSON object with
// the keys of Event and no others, a known direction and kind, and a
// payload. Blank lines are skipped. A last line cut short (a recorder that
// was killed mid-write) is an error like any other bad line.
func ReadTrace(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var events []Event
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return events, fmt.Errorf("line %d: %w", n, err)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			e, perr := parseEvent(trimmed)
			if perr != nil {
				return events, fmt.Errorf("line %d: %w", n, perr)
			}
			events = append(events, e)
		}
		if err != nil {
			return events, nil
		}
	}
}

var errLongLine = fmt.Errorf("a line over %d bytes", MaxLine)

// readLine reads one line without its newline; io.EOF with the last.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine+1 {
			return nil, errLongLine
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

func parseEvent(line []byte) (Event, error) {
	var e Event
	if err := interfaces.DecodeStrict(line, &e); errors.Is(err, interfaces.ErrTrailingData) {
		return e, errors.New("not a trace event: text after the object")
	} else if err != nil {
		return e, fmt.Errorf("not a trace event: %v", err)
	}
	switch e.Dir {
	case FromClient, FromServer:
	default:
		return e, fmt.Errorf("direction %q: want %q or %q", workspace.Clip(string(e.Dir), 32), FromClient, FromServer)
	}
	switch e.Kind {
	case KindRequest, KindNotification:
		if e.Method == "" {
			return e, fmt.Errorf("a %s without a method", e.Kind)
		}
	case KindResponse, KindError:
		if e.Echo == nil {
			return e, fmt.Errorf("a %s without the echo of its request", e.Kind)
		}
	case KindInvalid:
	default:
		return e, fmt.Errorf("kind %q is not a message kind", workspace.Clip(string(e.Kind), 32))
	}
	if e.Kind == KindRequest && len(e.ID) == 0 {
		return e, errors.New("a request without an id")
	}
	if len(e.Payload) == 0 || string(e.Payload) == "null" {
		return e, errors.New("an event without a payload")
	}
	return e, nil
}

// Entry is one tape in a listing.
type Entry struct {
	Name string
	Meta Meta
	Err  error // meta.json could not be read
}

// List returns the tapes under WORKSPACE/tapes, sorted by name. A missing
// folder is an empty list.
func List(workspaceDir string) ([]Entry, error) {
	root := filepath.Join(workspaceDir, DirName)
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tapes: %w", err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || !ValidName(de.Name()) {
			continue
		}
		e := Entry{Name: de.Name()}
		b, err := os.ReadFile(filepath.Join(root, de.Name(), MetaFile))
		if err == nil {
			err = json.Unmarshal(b, &e.Meta)
		}
		e.Err = err
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// marshalCompact encodes v as one line without HTML escaping, so that a
// payload keeps the bytes it crossed the wire with.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
