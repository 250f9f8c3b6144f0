package mcpapi

import (
	"bytes"
	"mime"
	"net/http"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// mediaTypeError is a body's Content-Type or Content-Encoding refused:
// 415 with the error envelope (and Accept-Encoding: identity when the
// encoding was).
type mediaTypeError struct {
	msg      string
	encoding bool
}

// checkMediaType checks the headers of a POST body: Content-Type
// application/json (a charset parameter, if any, utf-8; the SDK asks for
// the type too), no Content-Encoding other than identity.
func checkMediaType(h http.Header) *mediaTypeError {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return &mediaTypeError{msg: "Content-Encoding is not supported: send the body as it is (identity)", encoding: true}
			}
		}
	}
	cts := h.Values("Content-Type")
	if len(cts) != 1 {
		return &mediaTypeError{msg: "Content-Type must be application/json"}
	}
	mt, params, err := mime.ParseMediaType(cts[0])
	if err != nil || mt != "application/json" {
		return &mediaTypeError{msg: "Content-Type must be application/json"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &mediaTypeError{msg: "Content-Type charset must be utf-8: JSON text is UTF-8"}
	}
	return nil
}

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
