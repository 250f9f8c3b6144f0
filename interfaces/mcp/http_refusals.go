package mcpapi

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// mcpMedia is the media type policy of /mcp/: Streamable HTTP requires
// the Content-Type (the SDK asks for it too).
var mcpMedia = interfaces.MediaPolicy{RequireContentType: true}

// envelopeWriter passes a response through, except a plain-text refusal
// (http.Error's: a status of 400 or more with Content-Type text/plain),
// which go-sdk writes for what only it decides: a session it does not
// know (404), a session opened with another token (403), a bad Accept
// header or protocol version (400), a method a stateless request cannot
// use (405). finish writes such a refusal as the error envelope with the
// same status (and the SDK's Allow), its text as the message; a 5xx as
// INTERNAL "internal error". JSON-RPC errors (application/json) and
// answers pass untouched.
type envelopeWriter struct {
	http.ResponseWriter
	wroteHeader bool
	status      int // the refusal's status; 0 when passing through
	text        bytes.Buffer
}

func (e *envelopeWriter) WriteHeader(code int) {
	if e.wroteHeader {
		return
	}
	e.wroteHeader = true
	if code >= 400 && strings.HasPrefix(e.Header().Get("Content-Type"), "text/plain") {
		e.status = code
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *envelopeWriter) Write(b []byte) (int, error) {
	if !e.wroteHeader {
		e.WriteHeader(http.StatusOK)
	}
	if e.status != 0 {
		if room := 512 - e.text.Len(); room > 0 {
			e.text.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	return e.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController calls to flush (the SDK
// flushes its event streams through one).
func (e *envelopeWriter) FlushError() error {
	if e.status != 0 {
		return nil
	}
	return http.NewResponseController(e.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (e *envelopeWriter) Flush() { _ = e.FlushError() }

// Unwrap gives http.ResponseController the underlying writer.
func (e *envelopeWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// finish writes a refusal caught on the way as the envelope.
func (e *envelopeWriter) finish() {
	if e.status == 0 {
		return
	}
	text := strings.TrimPrefix(strings.TrimSpace(e.text.String()), "Bad Request: ")
	code, msg := workspace.CodeInvalidArgument, workspace.Clip(text, maxMessage)
	h := e.Header()
	switch {
	case e.status == http.StatusUnauthorized:
		code = workspace.CodeUnauthenticated
	case e.status == http.StatusForbidden:
		code = workspace.CodePermissionDenied
	case e.status == http.StatusNotFound:
		// The SDK's 404s are all of sessions it does not know (any more).
		code, msg = workspace.CodeNotFound, "no such MCP session (it ended or expired): start a new one with initialize"
	case e.status == http.StatusMethodNotAllowed && h.Get("Allow") != "":
		msg = "method not allowed: use " + h.Get("Allow")
	case e.status == http.StatusConflict:
		code = workspace.CodeConflict
	case e.status >= 500:
		code, msg = workspace.CodeInternal, "internal error"
	}
	if msg == "" {
		msg = strings.ToLower(http.StatusText(e.status))
	}
	h.Del("Content-Length")
	writeEnvelope(e.ResponseWriter, e.status, &workspace.Error{Code: code, Message: msg})
}
