// Package httpapi (folder interfaces/http) is the HTTP edge: chi routes for
// the versioned /v1 API, the security middleware of DESIGN §8 in front of
// them and of /mcp/, and the typed Client that sibling processes use.
// Handlers are thin adapters over interfaces.Service.
package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// writeJSON writes v as the response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, workspace.Wrap(workspace.CodeInternal, err, "internal error"))
		return
	}
	writeRaw(w, status, b)
}

// writeRaw writes b, one encoded JSON value, as the body, with a newline
// after it as every answer has.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError writes the sanitized {"error":{"code","message"}} body with
// the status of its code.
func writeError(w http.ResponseWriter, err error) {
	body := interfaces.NewErrorBody(err)
	status := HTTPStatus(body.Error.Code)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errBodyTooLarge) {
		status = http.StatusRequestEntityTooLarge
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = "request body is too large"
	}
	var bte *bodyTimeoutError
	if errors.As(err, &bte) {
		status = http.StatusRequestTimeout
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = bte.Error()
	}
	var mna *methodNotAllowed
	if errors.As(err, &mna) {
		status = http.StatusMethodNotAllowed
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = "method not allowed"
		if mna.allow != "" {
			body.Error.Message += ": use " + mna.allow
		}
		// RFC 9110: a 405 names the methods the route takes (an empty
		// Allow: none).
		w.Header().Set("Allow", mna.allow)
	}
	var mte *interfaces.MediaTypeError
	if errors.As(err, &mte) {
		// 415, the HTTP norm, with the code of every malformed request.
		status = http.StatusUnsupportedMediaType
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = mte.Message
		if mte.Encoding {
			w.Header().Set("Accept-Encoding", "identity")
		}
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tychora"`)
	}
	writeJSON(w, status, body)
}

var errBodyTooLarge = errors.New("request body too large")
