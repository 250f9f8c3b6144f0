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
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// No line ends the session. A line that is no JSON-RPC message, or one
// JSON-RPC does not let a server run, is answered with the JSON-RPC error a
// JSON-RPC client expects — -32700 for what is not JSON (or not UTF-8),
// -32600 for JSON that is no message, for a line over o.MaxRequestBytes,
// for a batch after a handshake for 2025-06-18 or later (which has none)
// and for a request reusing the id of one not yet answered — with a null
// id, and the next line is read (see stdioConn).
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
	w := &lockedWriter{w: out}
	// Once ServeStdio returns, out is the caller's again: the reader,
	// which may still be blocked reading in, writes nothing more.
	defer w.close()
	conn := newStdioConn(rc, w, int(o.MaxRequestBytes))
	defer conn.Close()
	err := srv.Run(ctx, stdioTransport{conn})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil
	}
	return err
}

// stdioTransport is the mcp.Transport of ServeStdio: its one connection.
type stdioTransport struct{ conn *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// stdioConn is the mcp.Connection of a stdio session: newline-delimited
// JSON-RPC, with the batches of the protocol versions before 2025-06-18.
// It hands the SDK decoded messages only, each of them one JSON-RPC lets a
// server run; it answers every other line itself (see ServeStdio):
//
//   - a line that is no message, or a batch that is no batch of them
//     (parseFrame);
//   - a batch after a handshake for a version without batches, or one
//     holding such a handshake;
//   - a request whose id is that of a request not yet answered (the SDK's
//     connection would drop it unanswered: TestSDKDropsReusedID).
//
// A batch's requests are answered with one array, once all are, as
// JSON-RPC asks; its notifications and responses are passed on in order.
type stdioConn struct {
	in     io.Closer
	out    *lockedWriter
	lines  chan stdioLine // from readLines
	closed chan struct{}
	once   sync.Once
	limit  int

	queue []jsonrpc.Message // the rest of the last batch; Read only

	mu sync.Mutex
	// inFlight holds the ids of the requests handed to the SDK and not
	// answered yet, each with its batch (nil for a request alone).
	inFlight map[jsonrpc.ID]*rpcBatch
	// answered is signalled (without blocking) whenever an answer frees
	// an id: Read waits on it to drain the requests in flight at the end
	// of the input.
	answered chan struct{}
	// batchless is set once an initialize asked for a protocol version
	// without JSON-RPC batches: batches are refused from then on. (Only
	// the first handshake counts in the SDK; refusing after any such one
	// can only refuse a batch the session would not run.)
	batchless bool
}

// rpcBatch collects the responses to the requests of one batch.
type rpcBatch struct {
	index     map[jsonrpc.ID]int
	responses []*jsonrpc.Response
	left      int
}

// stdioLine is one line of input: its bytes without the newline, whether
// it was over the limit (and dropped), or the error that ended the input.
type stdioLine struct {
	b    []byte
	over bool
	err  error
}

func newStdioConn(in io.ReadCloser, out *lockedWriter, limit int) *stdioConn {
	c := &stdioConn{in: in, out: out, lines: make(chan stdioLine), closed: make(chan struct{}), limit: limit, inFlight: map[jsonrpc.ID]*rpcBatch{}, answered: make(chan struct{}, 1)}
	go c.readLines(in)
	return c
}

// readLines sends the lines of in to c.lines until in ends or c closes.
func (c *stdioConn) readLines(in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		var line []byte
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !over {
				if len(line)+len(chunk) > c.limit+2 { // the line, perhaps "\r\n"
					over, line = true, nil
				} else {
					line = append(line, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		for _, l := range []stdioLine{{b: line, over: over}, {err: err}} {
			if l.err == nil && !l.over && len(bytes.Trim(l.b, " \t\r\n")) == 0 {
				continue // blank
			}
			select {
			case c.lines <- l:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Read returns the next message for the SDK, answering the lines that
// carry none on the way.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			return m, nil
		}
		var l stdioLine
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			if errors.Is(l.err, io.EOF) {
				c.drain(ctx)
			}
			return nil, l.err
		}
		msgs, code, msg := c.take(l)
		if code != 0 {
			if err := c.writeLine(rpcErrorLine(code, msg)); err != nil {
				return nil, err
			}
			continue
		}
		c.queue = msgs
	}
}

// take decodes line into the messages the SDK is to run, or says which
// JSON-RPC error answers it.
func (c *stdioConn) take(l stdioLine) (msgs []jsonrpc.Message, code int, msg string) {
	trimmed := bytes.Trim(l.b, " \t\r\n") // JSON's whitespace
	switch {
	case l.over:
		return nil, rpcInvalidRequest, fmt.Sprintf("Invalid Request: the message is over max_request_bytes (%d bytes)", c.limit)
	case !utf8.Valid(trimmed):
		return nil, rpcParseError, "Parse error: the message is not valid UTF-8"
	}
	raws, batch, code, msg := parseFrame(trimmed)
	if code != 0 {
		return nil, code, msg
	}
	msgs = make([]jsonrpc.Message, 0, len(raws))
	asks := false
	for _, r := range raws {
		m, err := jsonrpc.DecodeMessage(r.raw)
		if err != nil {
			// parseFrame let through a message the SDK cannot decode:
			// TestDecodeMessageTakesWhatParseFrameTakes.
			return nil, rpcInvalidRequest, "Invalid Request: " + workspace.Clip(err.Error(), maxMessage)
		}
		asks = asks || asksBatchless(m)
		msgs = append(msgs, m)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case batch && c.batchless:
		return nil, rpcInvalidRequest, "Invalid Request: the negotiated protocol version (2025-06-18 or later) has no JSON-RPC batches: send one message per line"
	case batch && asks:
		return nil, rpcInvalidRequest, "Invalid Request: an initialize for protocol version 2025-06-18 or later cannot come in a JSON-RPC batch"
	}
	var b *rpcBatch
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		if _, ok := c.inFlight[req.ID]; ok {
			id, _ := json.Marshal(req.ID.Raw())
			return nil, rpcInvalidRequest, "Invalid Request: the id " + workspace.Clip(string(id), maxMessage) + " is that of a request not yet answered"
		}
		if batch {
			if b == nil {
				b = &rpcBatch{index: map[jsonrpc.ID]int{}}
			}
			b.index[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
			b.left++
		}
	}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			c.inFlight[req.ID] = b
		}
	}
	c.batchless = c.batchless || asks
	return msgs, 0, ""
}

// Write writes msg as a line; a response to a request of a batch waits
// for the others, and the batch's answers go out as one array.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	var out []jsonrpc.Message
	if resp, ok := msg.(*jsonrpc.Response); ok {
		resp = withErrorCode(resp)
		msg = resp
		c.mu.Lock()
		// The id is free once its answer is written: a client that has
		// the answer may reuse it at once.
		b, inFlight := c.inFlight[resp.ID]
		delete(c.inFlight, resp.ID)
		if inFlight {
			defer c.signalAnswered()
		}
		if inFlight && b != nil {
			b.responses[b.index[resp.ID]] = resp
			if b.left--; b.left > 0 {
				c.mu.Unlock()
				return nil
			}
			for _, r := range b.responses {
				out = append(out, r)
			}
		}
		c.mu.Unlock()
	}
	if out == nil {
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return fmt.Errorf("encoding a JSON-RPC message: %w", err)
		}
		return c.writeLine(append(data, '\n'))
	}
	raws := make([]json.RawMessage, 0, len(out))
	for _, m := range out {
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return fmt.Errorf("encoding a JSON-RPC message: %w", err)
		}
		raws = append(raws, data)
	}
	data, err := json.Marshal(raws)
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC batch: %w", err)
	}
	return c.writeLine(append(data, '\n'))
}

// withErrorCode gives an error answer that carries no JSON-RPC code (the
// SDK answers a call before initialize with a plain error, which would
// travel as code 0, no code JSON-RPC knows) the code -32600: such an
// error is the SDK's refusal of the request as the session stands.
func withErrorCode(resp *jsonrpc.Response) *jsonrpc.Response {
	var we *jsonrpc.Error
	if resp.Error == nil || errors.As(resp.Error, &we) {
		return resp
	}
	r := *resp
	r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: workspace.Clip(resp.Error.Error(), maxMessage)}
	return &r
}

// drainLimit bounds how long the end of the input waits for the answers
// to the requests in flight: each is bounded by its own deadline, so this
// only guards against an answer that never comes.
const drainLimit = 30 * time.Second

// drain waits, at the end of the input, until every request handed to
// the SDK is answered (or ctx ends, or drainLimit passes): a client that
// writes its requests and closes its end of the pipe (`printf … | tychora
// serve --stdio`) still gets every answer before the session ends.
func (c *stdioConn) drain(ctx context.Context) {
	t := time.NewTimer(drainLimit)
	defer t.Stop()
	for {
		c.mu.Lock()
		n := len(c.inFlight)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-t.C:
			return
		}
	}
}

// signalAnswered wakes drain, if it waits.
func (c *stdioConn) signalAnswered() {
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// writeLine writes one frame; after Close it writes nothing.
func (c *stdioConn) writeLine(b []byte) error {
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(b)
	return err
}

// Close closes in (so that a blocked read of it ends, where in allows)
// and ends Read.
func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID is "": stdio has no session ids.
func (c *stdioConn) SessionID() string { return "" }

// asksBatchless reports whether m is an initialize request for a protocol
// version without batches. Batches were removed in 2025-06-18. The server
// grants the version a client asks for when it supports it and its newest
// otherwise, so only supported versions before 2025-06-18 keep batches.
// (Before any handshake, or with a 2026-07-28 client, which has none,
// batches are served.)
func asksBatchless(m jsonrpc.Message) bool {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || !req.IsCall() {
		return false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil || params == nil {
		return false // refused by the SDK: no handshake
	}
	var v string
	_ = json.Unmarshal(params["protocolVersion"], &v)
	return !batchesAllowed(v)
}

// batchesAllowed reports whether a handshake asking for protocol version v
// leaves JSON-RPC batches in the protocol.
func batchesAllowed(v string) bool {
	return slices.Contains(mcp.SupportedProtocolVersions(), v) && v < "2025-06-18"
}

// lockedWriter serializes whole writes: the SDK writes each frame with
// one Write, and so does stdioConn, so frames never interleave. After
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
