package tape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tychora/tychora/workspace"
)

// sessionHeader is the Streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// statelessSession keys the requests that carry no session (protocol
// 2026-07-28 on, or a server without sessions): one tape for all of them.
const statelessSession = "stateless"

// HTTPRecorder records each MCP session served over Streamable HTTP as a
// tape of its own, named "http-TIME-SESSION". Only message bodies are
// written, never a header: a bearer token cannot reach a tape that way.
// A session's tape ends when the client deletes the session, or at Close.
type HTTPRecorder struct {
	root  string
	opts  Options
	log   *slog.Logger
	mu    sync.Mutex
	tapes map[string]*Recorder
	done  bool
}

// NewHTTPRecorder records under root (WORKSPACE/tapes). o.Name is ignored;
// log (nil: silent) hears of sessions that could not be recorded.
func NewHTTPRecorder(root string, o Options, log *slog.Logger) (*HTTPRecorder, error) {
	if _, err := CompileRedact(o.Redact); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HTTPRecorder{root: root, opts: o, log: log, tapes: map[string]*Recorder{}}, nil
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// recorder is the tape of session, started on first use; nil when it
// cannot be (after Close, or the tape could not be created).
func (h *HTTPRecorder) recorder(session string) *Recorder {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return nil
	}
	if rec, ok := h.tapes[session]; ok {
		return rec
	}
	id := unsafeNameChars.ReplaceAllString(session, "")
	if len(id) > 32 {
		id = id[:32]
	}
	name := fmt.Sprintf("http-%s-%s", h.opts.Now().UTC().Format("20060102T150405.000Z"), id)
	o := h.opts
	o.Name = name
	rec, err := Create(filepath.Join(h.root, name), o)
	if err != nil {
		h.log.Warn("cannot record the MCP session", workspace.LogSession, session, workspace.LogErr, err)
	}
	h.tapes[session] = rec // nil after a failure: not tried again
	return rec
}

// end closes the tape of session.
func (h *HTTPRecorder) end(session string) {
	h.mu.Lock()
	rec := h.tapes[session]
	delete(h.tapes, session)
	h.mu.Unlock()
	if rec != nil {
		if err := rec.Close(); err != nil {
			h.log.Warn("cannot finish the tape of an MCP session", workspace.LogSession, session, workspace.LogErr, err)
		}
	}
}

// Close ends every tape; later requests are served but not recorded.
func (h *HTTPRecorder) Close() error {
	h.mu.Lock()
	h.done = true
	tapes := h.tapes
	h.tapes = map[string]*Recorder{}
	h.mu.Unlock()
	var errs []error
	for _, rec := range tapes {
		if rec != nil {
			errs = append(errs, rec.Close())
		}
	}
	return errors.Join(errs...)
}

// Wrap returns next with every request and response body it handles
// recorded. The bytes next reads and writes are not changed.
func (h *HTTPRecorder) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w, h: h, req: r}
		if r.Body != nil {
			rw.body = &bufferedBody{ReadCloser: r.Body}
			r.Body = rw.body
		}
		next.ServeHTTP(rw, r)
		rw.finish()
		if r.Method == http.MethodDelete && rw.session != "" {
			h.end(rw.session)
		}
	})
}

// bufferedBody keeps what the handler read of a request body.
type bufferedBody struct {
	io.ReadCloser
	buf bytes.Buffer
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.buf.Len() < MaxLine {
		b.buf.Write(p[:n])
	}
	return n, err
}

// recordingWriter records a response: a JSON body whole, an event stream
// one data event at a time. The request's body is recorded when the
// response starts, once the session (named by the response for an
// initialize) is known.
type recordingWriter struct {
	http.ResponseWriter
	h       *HTTPRecorder
	req     *http.Request
	body    *bufferedBody
	started bool
	session string
	rec     *Recorder
	sse     bool
	out     bytes.Buffer // a JSON body, or the unfinished line of a stream
	data    bytes.Buffer // the data lines of the current event
}

func (rw *recordingWriter) start() {
	if rw.started {
		return
	}
	rw.started = true
	rw.session = rw.Header().Get(sessionHeader)
	if rw.session == "" {
		rw.session = rw.req.Header.Get(sessionHeader)
	}
	if rw.session == "" {
		rw.session = statelessSession
	}
	ct, _, _ := mime.ParseMediaType(rw.Header().Get("Content-Type"))
	rw.sse = ct == "text/event-stream"
	if rw.body == nil || rw.body.buf.Len() == 0 {
		if ct == "" {
			return // nothing to record yet: a 202 to a notification, a DELETE
		}
	}
	rw.rec = rw.h.recorder(rw.session)
	if rw.rec != nil && rw.body != nil && rw.body.buf.Len() > 0 {
		rw.rec.Record(FromClient, compactJSON(rw.body.buf.Bytes()))
	}
}

func (rw *recordingWriter) WriteHeader(code int) {
	rw.start()
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recordingWriter) Write(p []byte) (int, error) {
	rw.start()
	if rw.rec != nil {
		rw.feed(p)
	}
	return rw.ResponseWriter.Write(p)
}

// feed takes bytes of the body: kept whole for JSON, cut into events for
// a stream.
func (rw *recordingWriter) feed(p []byte) {
	if !rw.sse {
		if rw.out.Len()+len(p) <= MaxLine {
			rw.out.Write(p)
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			rw.out.Write(p)
			return
		}
		rw.out.Write(p[:i])
		rw.line(bytes.TrimSuffix(rw.out.Bytes(), []byte("\r")))
		rw.out.Reset()
		p = p[i+1:]
	}
}

// line takes one line of an event stream: a blank line ends an event,
// whose data is one message.
func (rw *recordingWriter) line(l []byte) {
	switch {
	case len(l) == 0:
		if rw.data.Len() > 0 {
			rw.rec.Record(FromServer, rw.data.Bytes())
			rw.data.Reset()
		}
	case bytes.HasPrefix(l, []byte("data:")):
		if rw.data.Len() > 0 {
			rw.data.WriteByte('\n')
		}
		rw.data.Write(bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" ")))
	}
}

func (rw *recordingWriter) finish() {
	rw.start()
	if rw.rec == nil {
		return
	}
	if rw.sse {
		if rw.out.Len() > 0 {
			rw.line(rw.out.Bytes())
		}
		rw.line(nil)
		return
	}
	if strings.TrimSpace(rw.out.String()) != "" {
		rw.rec.Record(FromServer, compactJSON(rw.out.Bytes()))
	}
}

// Flush passes a stream's events on at once.
func (rw *recordingWriter) Flush() {
	rw.start()
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (rw *recordingWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// compactJSON is b on one line when it is JSON (a body may be indented),
// else b.
func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) == nil {
		return out.Bytes()
	}
	return bytes.ReplaceAll(b, []byte("\n"), []byte(" "))
}
