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
// A line that is no JSON-RPC message does not end the session: it is
// answered with the JSON-RPC error a JSON-RPC client expects — -32700 for
// what is not JSON (or not UTF-8), -32600 for JSON that is no message and
// for a line over o.MaxRequestBytes and for a batch after a handshake
// for 2025-06-18 or later, which has none — with a null id, and the next
// line is read (see frameFilter).
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
	go frameFilter(rc, pw, w, int(o.MaxRequestBytes))
	// The SDK sees only lines that passed the filter, each within the
	// limit; its own line limit stays as a second guard.
	t := &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{w}, MaxLineLength: int(o.MaxRequestBytes) + 2}
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
func frameFilter(in io.Reader, pw *io.PipeWriter, out io.Writer, limit int) {
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
			if code, msg := checkJSONRPC(trimmed); code != 0 {
				if !writeFrameError(out, code, msg) {
					return
				}
				break
			}
			if trimmed[0] == '[' {
				why := ""
				switch {
				case batchless:
					why = "the negotiated protocol version (2025-06-18 or later) has no JSON-RPC batches: send one message per line"
				case asksBatchless(trimmed):
					// The SDK would end the session on answering it.
					why = "an initialize for protocol version 2025-06-18 or later cannot come in a JSON-RPC batch"
				}
				if why != "" {
					if !writeFrameError(out, rpcInvalidRequest, "Invalid Request: "+why) {
						return
					}
					break
				}
			} else {
				batchless = batchless || asksBatchless(trimmed)
			}
			if _, werr := pw.Write(append(trimmed, '\n')); werr != nil {
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

// nopWriteCloser keeps the transport from closing the caller's writer.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
