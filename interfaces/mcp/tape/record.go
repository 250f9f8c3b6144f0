package tape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tychora/tychora/workspace"
)

// Options configure a Recorder. The zero value works.
type Options struct {
	Name           string // the tape's name, for meta.json
	Server         string // what is recorded, for meta.json
	TychoraVersion string
	// Redact lists regular expressions (RE2) whose matches are written as
	// [REDACTED], on top of the built-in ones (bearer tokens, tychora
	// secrets, Authorization values).
	Redact []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Redacted is what a secret is written as.
const Redacted = "[REDACTED]"

// redactor replaces the matches of re with repl (a regexp template).
type redactor struct {
	re   *regexp.Regexp
	repl []byte
}

// builtinRedactors are applied to every line: the value of a bearer
// credential, a tychora secret wherever it appears, and the value of an
// "Authorization" member.
var builtinRedactors = []redactor{
	{regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`), []byte("${1}" + Redacted)},
	{regexp.MustCompile(regexp.QuoteMeta(workspace.TokenPrefix) + `[0-9a-fA-F]{16,}`), []byte(Redacted)},
	// "Authorization": "…" as a member, escaped inside a string, or as a
	// header line: the value up to the closing quote or the line's end.
	{regexp.MustCompile(`(?i)(authorization(?:\\?")?\s*[:=]\s*(?:\\?")?)[^"\\\r\n]+`), []byte("${1}" + Redacted)},
}

// CompileRedact compiles a redaction list (the tape_redact setting): an
// INVALID_ARGUMENT error gives the index of the first pattern that is no
// RE2 regular expression or that matches the empty string (never the
// pattern, which may spell out a secret).
func CompileRedact(patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, workspace.Errorf(workspace.CodeInvalidArgument, "tape_redact[%d] is not a regular expression (RE2): %s", i, workspace.RegexpProblem(err))
		}
		if re.MatchString("") {
			return nil, workspace.Errorf(workspace.CodeInvalidArgument, "tape_redact[%d] matches the empty string", i)
		}
		out = append(out, re)
	}
	return out, nil
}

// Recorder writes a tape: every message given to Record is a line of
// trace.jsonl, written before Record returns; Close writes the final
// meta.json. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	dir     string // "" writes no meta.json
	trace   io.WriteCloser
	now     func() time.Time
	start   time.Time
	meta    Meta
	seq     int
	redact  []redactor
	pending map[string]pendingRequest
	err     error // the first write error; later records are dropped
	closed  bool
}

type pendingRequest struct {
	method string
	tool   string
	params json.RawMessage
	at     time.Time
}

// Create starts a tape in dir, which must not exist (CONFLICT when it
// does). Its parent is created with mode 0700, and the tape's files with
// mode 0600.
func Create(dir string, o Options) (*Recorder, error) {
	if _, err := CompileRedact(o.Redact); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("create tape: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, workspace.Errorf(workspace.CodeConflict, "tape %s exists already: pick another name or remove it", dir)
		}
		return nil, fmt.Errorf("create tape: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, TraceFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create tape: %w", err)
	}
	r, err := newRecorder(f, o)
	if err == nil {
		r.dir = dir
		err = r.writeMeta()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// newRecorder is a Recorder writing its trace to trace and no meta.json
// (Create sets dir for that).
func newRecorder(trace io.WriteCloser, o Options) (*Recorder, error) {
	res, err := CompileRedact(o.Redact)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	r := &Recorder{
		trace: trace, now: now, start: now(),
		redact:  append([]redactor(nil), builtinRedactors...),
		pending: map[string]pendingRequest{},
	}
	for _, re := range res {
		r.redact = append(r.redact, redactor{re, []byte(Redacted)})
	}
	r.meta = Meta{Version: FormatVersion, Name: o.Name, Server: o.Server, TychoraVersion: o.TychoraVersion, StartedAt: r.start.UTC()}
	return r, nil
}

// Dir is the tape's directory.
func (r *Recorder) Dir() string { return r.dir }

func (r *Recorder) writeMeta() error {
	if r.dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(r.meta, "", "  ")
	if err != nil {
		return err
	}
	return workspace.WriteFileAtomic(filepath.Join(r.dir, MetaFile), append(b, '\n'), 0o600)
}

// Close writes meta.json with the end time and the counts, and closes the
// trace. It returns the first error any write met.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	r.meta.EndedAt = r.now().UTC()
	if err := r.writeMeta(); err != nil && r.err == nil {
		r.err = err
	}
	if err := r.trace.Close(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}

// Record writes the line d sent (one JSON-RPC message or batch, with or
// without its newline) to the trace, redacted. Blank lines are skipped.
func (r *Recorder) Record(d Direction, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	line = r.redactLine(line)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil {
		return
	}
	at := r.now()
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) == nil && len(batch) > 0 {
			for i, m := range batch {
				r.write(r.event(d, m, at, i+1))
			}
			return
		}
	}
	r.write(r.event(d, line, at, 0))
}

func (r *Recorder) redactLine(line []byte) []byte {
	for _, rd := range r.redact {
		line = rd.re.ReplaceAll(line, rd.repl)
	}
	return line
}

// event classifies one message. Called with r.mu held.
func (r *Recorder) event(d Direction, raw []byte, at time.Time, batch int) Event {
	r.seq++
	e := Event{Seq: r.seq, AtMS: millis(at.Sub(r.start)), Dir: d, Batch: batch}
	r.meta.Counts.Messages++
	msg, err := jsonrpc.DecodeMessage(raw)
	if err == nil && !json.Valid(raw) {
		err = errors.New("text after the message") // DecodeMessage reads one value and stops
	}
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "" {
		err = errors.New("an empty method") // no MCP method; the trace names every method
	}
	if err != nil {
		e.Kind = KindInvalid
		e.Payload, _ = marshalCompact(string(raw))
		r.meta.Counts.Invalid++
		return e
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, raw) // valid, checked above
	e.Payload = compact.Bytes()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		e.Method = m.Method
		if !m.IsCall() {
			e.Kind = KindNotification
			r.meta.Counts.Notifications++
			return e
		}
		e.Kind = KindRequest
		e.ID = idJSON(m.ID)
		e.Tool = toolName(m.Method, m.Params)
		r.meta.Counts.Requests++
		if d == FromServer {
			r.meta.Counts.ServerRequests++
		}
		if d == FromClient && r.meta.Client == "" {
			r.meta.Client = clientOf(m.Params)
			if v := metaProtocol(m.Params); v != "" {
				r.meta.ProtocolVersion = v
			}
		}
		r.pending[string(d)+string(e.ID)] = pendingRequest{m.Method, e.Tool, m.Params, at}
	case *jsonrpc.Response:
		e.Kind = KindResponse
		if m.Error != nil {
			e.Kind = KindError
			r.meta.Counts.Errors++
		}
		r.meta.Counts.Responses++
		e.ID = idJSON(m.ID)
		key := string(other(d)) + string(e.ID)
		p, ok := r.pending[key]
		if ok {
			delete(r.pending, key)
			e.MS = millis(at.Sub(p.at))
			e.Tool = p.tool
			if p.method == "initialize" && m.Error == nil {
				r.meta.ProtocolVersion = protocolOf(m.Result)
			}
		}
		e.Echo = &Echo{Method: p.method, Params: p.params}
	}
	return e
}

// write appends e to the trace. Called with r.mu held.
func (r *Recorder) write(e Event) {
	b, err := marshalCompact(e)
	if err == nil {
		_, err = r.trace.Write(append(b, '\n'))
	}
	if err != nil {
		r.err = fmt.Errorf("write tape: %w", err)
	}
}

func other(d Direction) Direction {
	if d == FromClient {
		return FromServer
	}
	return FromClient
}

func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

func idJSON(id jsonrpc.ID) json.RawMessage {
	b, _ := json.Marshal(id.Raw())
	return b
}

// toolName is the tool a tools/call names ("" for other methods).
func toolName(method string, params json.RawMessage) string {
	if method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// clientOf is the client's name and version from an initialize's
// clientInfo, or from the _meta member that carries it from protocol
// 2026-07-28 on.
func clientOf(params json.RawMessage) string {
	var p struct {
		ClientInfo implementation `json:"clientInfo"`
		Meta       struct {
			ClientInfo implementation `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	info := p.ClientInfo
	if info.Name == "" {
		info = p.Meta.ClientInfo
	}
	if info.Name == "" {
		return ""
	}
	return info.Name + " " + info.Version
}

// metaProtocol is the protocol version a request's _meta names (protocol
// 2026-07-28 on).
func metaProtocol(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta.Version
}

func protocolOf(result json.RawMessage) string {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(result, &r)
	return r.ProtocolVersion
}

// Reader returns a reader that reads in and records each line read as
// sent by d. Its Close closes in when in is an io.Closer.
func (r *Recorder) Reader(in io.Reader, d Direction) io.ReadCloser {
	return &teeReader{in: in, lines: lineSplitter{record: func(l []byte) { r.Record(d, l) }}}
}

// Writer returns a writer that records each line written as sent by d,
// then writes it to out unchanged.
func (r *Recorder) Writer(out io.Writer, d Direction) io.Writer {
	return &teeWriter{out: out, lines: lineSplitter{record: func(l []byte) { r.Record(d, l) }}}
}

type teeReader struct {
	in    io.Reader
	lines lineSplitter
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.in.Read(p)
	t.lines.feed(p[:n])
	if err != nil {
		t.lines.flush()
	}
	return n, err
}

func (t *teeReader) Close() error {
	if c, ok := t.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type teeWriter struct {
	mu    sync.Mutex
	out   io.Writer
	lines lineSplitter
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Recorded first: a client that has read an answer may send its next
	// request at once, and the trace keeps the order the peers saw.
	t.lines.feed(p)
	return t.out.Write(p)
}

// lineSplitter cuts a byte stream into lines. A line over MaxLine is
// recorded as its first MaxLine bytes (then no JSON, so an invalid line).
type lineSplitter struct {
	buf    []byte
	over   bool
	record func([]byte)
}

func (s *lineSplitter) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !s.over {
			if len(s.buf)+len(chunk) > MaxLine {
				s.buf = append(s.buf, chunk[:MaxLine-len(s.buf)]...)
				s.over = true
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		if i < 0 {
			return
		}
		s.flush()
		p = p[i+1:]
	}
}

func (s *lineSplitter) flush() {
	if len(s.buf) > 0 {
		s.record(s.buf)
	}
	s.buf, s.over = s.buf[:0], false
}
