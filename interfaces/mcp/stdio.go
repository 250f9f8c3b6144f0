package mcpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// ServeStdio serves MCP over newline-delimited JSON on in and out (a
// process's stdin and stdout) until in ends or ctx is done. Every request
// acts as principal, the process's grant. out carries MCP frames only; logs
// go to o.Logger. It returns nil at the end of in, ctx.Err() when ctx ends
// first, and the transport's error otherwise. ServeStdio never closes out;
// it closes in when in is an io.ReadCloser.
//
// No line ends the session. A line that is no JSON-RPC message, or one the
// SDK would end the session on, is answered with the JSON-RPC error a
// JSON-RPC client expects — -32700 for what is not JSON (or not UTF-8),
// -32600 for JSON that is no message, for a line over o.MaxRequestBytes,
// for a batch after a handshake for 2025-06-18 or later (which has none)
// and for a request reusing the id of one not yet answered — with a null
// id, and the next line is read (see frameFilter).
func ServeStdio(ctx context.Context, svc interfaces.Service, principal workspace.Principal, in io.Reader, out io.Writer, o Options) error {
	if !principal.Grant.Valid() {
		return workspace.Errorf(workspace.CodeInvalidArgument, "stdio principal has no valid grant")
	}
	o = o.fill()
	o.Principal = &principal
	srv := NewServer(svc, o)
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	defer rc.Close()
	w := &lockedWriter{w: out}
	// Once ServeStdio returns, out is the caller's again: the filter, which
	// may still be blocked reading in, writes nothing more.
	defer w.close()
	pr, pw := io.Pipe()
	pending := &inFlight{ids: map[string]struct{}{}}
	go frameFilter(rc, pw, w, int(o.MaxRequestBytes), pending)
	// The SDK sees only lines that passed the filter, each within the
	// limit; its own line limit stays as a second guard.
	t := &mcp.IOTransport{Reader: pr, Writer: answerWatcher{w, pending}, MaxLineLength: int(o.MaxRequestBytes) + 2}
	err := srv.Run(ctx, t)
	_ = pr.Close()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil
	}
	return err
}

// frameFilter copies the lines of in to pw (each with its newline) and
// answers on out, itself, the lines that are no JSON-RPC message (see
// ServeStdio). Blank lines are skipped. It closes pw when in ends, or
// stops when pw is closed (the session ended).
//
// The SDK's stdio transport (go-sdk v1.8.0, ioConn) ends the session on a
// batch holding a request or notification whose id it has seen in a batch
// before and not yet answered ("batch contains previously seen request").
// A notification has no id (the zero id), is never answered, and so stays
// "seen" for good: a second batch with a notification ends the session,
// and a batch with a notification never gets its answer (the SDK waits
// for one to the notification). So the filter sends a batch's
// notifications as single lines (those before its first request first,
// the others after it) and its requests and responses as a batch, which
// the SDK answers with one array; and it refuses (-32600) a request whose
// id is that of one the SDK has not answered yet (pending), which the SDK
// would end the session on, or answer with a null id and leave its batch
// unanswered.
func frameFilter(in io.Reader, pw *io.PipeWriter, out io.Writer, limit int, pending *inFlight) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	// batchless is set once an initialize asked for a protocol version
	// without JSON-RPC batches: batches are refused from then on. (Only
	// the first handshake counts in the SDK; refusing after any such one
	// can only refuse too much, never let a session-ending batch through.)
	batchless := false
	for {
		line = line[:0]
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !over {
				if len(line)+len(chunk) > limit+2 { // the line, perhaps "\r\n"
					over, line = true, line[:0]
				} else {
					line = append(line, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		trimmed := bytes.Trim(line, " \t\r\n") // JSON's whitespace
		var send [][]byte                      // the lines for the SDK
		switch {
		case over:
			if !writeFrameError(out, rpcInvalidRequest, fmt.Sprintf("Invalid Request: the message is over max_request_bytes (%d bytes)", limit)) {
				return
			}
		case len(trimmed) == 0:
		case !utf8.Valid(trimmed):
			if !writeFrameError(out, rpcParseError, "Parse error: the message is not valid UTF-8") {
				return
			}
		default:
			msgs, batch, code, msg := parseFrame(trimmed)
			if code == 0 && batch {
				switch {
				case batchless:
					code, msg = rpcInvalidRequest, "Invalid Request: the negotiated protocol version (2025-06-18 or later) has no JSON-RPC batches: send one message per line"
				case asksBatchless(trimmed):
					// The SDK would end the session on answering it.
					code, msg = rpcInvalidRequest, "Invalid Request: an initialize for protocol version 2025-06-18 or later cannot come in a JSON-RPC batch"
				}
			}
			if code == 0 {
				code, msg = pending.admit(msgs)
			}
			if code != 0 {
				if !writeFrameError(out, code, msg) {
					return
				}
				break
			}
			if !batch {
				if !batchless && asksBatchless(trimmed) {
					batchless = true
					pending.stop() // no batch will come
				}
				send = append(send, trimmed)
				break
			}
			send = splitBatch(msgs)
		}
		for _, s := range send {
			if _, werr := pw.Write(append(s, '\n')); werr != nil {
				return // the session ended
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = pw.Close()
			} else {
				_ = pw.CloseWithError(err)
			}
			return
		}
	}
}

// splitBatch returns the lines a batch goes to the SDK as: each
// notification alone (those before the first other message first, the
// rest after), and the requests and responses as one batch.
func splitBatch(msgs []rpcMsg) [][]byte {
	var head, tail [][]byte
	var rest [][]byte
	for _, m := range msgs {
		switch {
		case !m.notification():
			rest = append(rest, m.raw)
		case len(rest) == 0:
			head = append(head, m.raw)
		default:
			tail = append(tail, m.raw)
		}
	}
	if len(rest) > 0 {
		head = append(head, append(append([]byte("["), bytes.Join(rest, []byte(","))...), ']'))
	}
	return append(head, tail...)
}

// inFlight is the set of the ids of the requests the SDK took and has not
// answered yet, as far as the stdio filter can tell: an id joins when its
// request passes the filter and leaves once a response with it has been
// written out (the SDK forgets an id, in its batches and in its
// connection, before it writes the response). After a handshake for a
// version without batches it tracks nothing: the SDK itself refuses a
// single request reusing an id in flight, without harm.
type inFlight struct {
	mu  sync.Mutex
	off bool
	ids map[string]struct{}
}

// admit refuses msgs when a request among them reuses the id of a request
// in flight, and otherwise counts their requests in flight.
func (f *inFlight) admit(msgs []rpcMsg) (code int, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return 0, ""
	}
	for _, m := range msgs {
		if _, ok := f.ids[m.id]; ok && m.call() {
			return rpcInvalidRequest, "Invalid Request: the id " + workspace.Clip(string(m.idJSON), maxMessage) + " is that of a request not yet answered"
		}
	}
	for _, m := range msgs {
		if m.call() {
			f.ids[m.id] = struct{}{}
		}
	}
	return 0, ""
}

func (f *inFlight) stop() {
	f.mu.Lock()
	f.off, f.ids = true, nil
	f.mu.Unlock()
}

// answered takes the ids of the responses in frame, a frame the SDK
// wrote, out of the set.
func (f *inFlight) answered(frame []byte) {
	f.mu.Lock()
	idle := f.off || len(f.ids) == 0
	f.mu.Unlock()
	if idle {
		return
	}
	ids := responseIDs(frame)
	f.mu.Lock()
	for _, id := range ids {
		delete(f.ids, id)
	}
	f.mu.Unlock()
}

// responseIDs returns the ids of the responses in frame (one message or a
// batch), as parseMessage spells them. A single response is read only up
// to its id and its result or error member, which the SDK writes first,
// so a large result is not scanned.
func responseIDs(frame []byte) []string {
	if b := bytes.TrimLeft(frame, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(frame, &batch) != nil {
			return nil
		}
		var ids []string
		for _, raw := range batch {
			if m, why := parseMessage(raw); why == "" && !m.hasMethod {
				ids = append(ids, m.id)
			}
		}
		return ids
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	response := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		switch key, _ := t.(string); key {
		case "method":
			return nil // a request or notification of the server's
		case "id":
			if dec.Decode(&id) != nil {
				return nil
			}
		case "result", "error":
			response = true
			if id != nil {
				return responseID(id)
			}
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
	}
	if !response || id == nil {
		return nil
	}
	return responseID(id)
}

func responseID(raw json.RawMessage) []string {
	if key, _, why := parseID(raw); why == "" {
		return []string{key}
	}
	return nil
}

// asksBatchless reports whether msg, a message or a batch, holds an
// initialize request for a protocol version without batches. Batches were
// removed in 2025-06-18, and the SDK ends a stdio session that gets one
// after such a handshake, so the filter answers it instead. The server
// grants the version a client asks for when it supports it and its newest
// otherwise, so only supported versions before 2025-06-18 keep batches.
// (Before any handshake, or with a 2026-07-28 client, which has none, the
// SDK takes batches.) Keys are matched exactly, as the SDK matches them.
func asksBatchless(msg []byte) bool {
	if !bytes.Contains(msg, []byte("initialize")) && bytes.IndexByte(msg, '\\') < 0 {
		return false // cheap: no initialize, not even escaped
	}
	var msgs []json.RawMessage // fresh: RawMessage decoding reuses a slice's bytes
	if msg[0] != '[' {
		msgs = append(msgs, msg)
	} else if json.Unmarshal(msg, &msgs) != nil {
		return false
	}
	for _, m := range msgs {
		if v, ok := initializeVersion(m); ok && !batchesAllowed(v) {
			return true
		}
	}
	return false
}

// initializeVersion returns the protocolVersion an initialize request
// asks for ("" when it names none).
func initializeVersion(msg json.RawMessage) (string, bool) {
	var f, params map[string]json.RawMessage
	var method string
	if json.Unmarshal(msg, &f) != nil || json.Unmarshal(f["method"], &method) != nil || method != "initialize" {
		return "", false
	}
	if id, ok := f["id"]; !ok || kind(id) == 'n' {
		return "", false // a notification: no handshake
	}
	if json.Unmarshal(f["params"], &params) != nil || params == nil {
		return "", false // refused by the SDK: no handshake
	}
	var v string
	_ = json.Unmarshal(params["protocolVersion"], &v)
	return v, true
}

// batchesAllowed reports whether a handshake asking for protocol version v
// leaves JSON-RPC batches in the protocol.
func batchesAllowed(v string) bool {
	return slices.Contains(mcp.SupportedProtocolVersions(), v) && v < "2025-06-18"
}

// writeFrameError writes one JSON-RPC error response (id null) as a line;
// false when out is gone.
func writeFrameError(out io.Writer, code int, msg string) bool {
	_, err := out.Write(rpcErrorLine(code, msg))
	return err == nil
}

// lockedWriter serializes whole writes: the SDK writes each frame with
// one Write, and so does frameFilter, so frames never interleave. After
// close it writes nothing.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, io.ErrClosedPipe
	}
	return l.w.Write(p)
}

func (l *lockedWriter) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// answerWatcher is the SDK's writer: it tells pending of the responses
// in a frame, then writes the frame to w. (The SDK forgot their ids
// already; and a client that got an answer may reuse its id at once.) Its
// Close keeps the transport from closing the caller's writer.
type answerWatcher struct {
	w       io.Writer
	pending *inFlight
}

func (a answerWatcher) Write(p []byte) (int, error) {
	a.pending.answered(p)
	return a.w.Write(p)
}

func (answerWatcher) Close() error { return nil }
