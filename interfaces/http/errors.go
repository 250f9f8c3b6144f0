// Package httpapi (folder interfaces/http) is the HTTP edge: chi routes for
// the versioned /v1 API, the security middleware of DESIGN §8 in front of
// them and of /mcp/, and the typed Client that sibling processes use.
// Handlers are thin adapters over interfaces.Service.
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

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
	status := workspace.HTTPStatus(body.Error.Code)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errBodyTooLarge) {
		status = http.StatusRequestEntityTooLarge
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = "request body is too large"
	}
	var mna *methodNotAllowed
	if errors.As(err, &mna) {
		status = http.StatusMethodNotAllowed
		body.Error.Code = workspace.CodeInvalidArgument
		body.Error.Message = "method not allowed"
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tychora"`)
	}
	writeJSON(w, status, body)
}

var errBodyTooLarge = errors.New("request body too large")

// decodeJSON strictly decodes one JSON value from the request body into v:
// unknown fields, trailing data and bytes that are not UTF-8 (which JSON
// text must be, and which encoding/json would quietly turn into U+FFFD)
// are INVALID_ARGUMENT, a body over the limit is 413.
func decodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		return workspace.Errorf(workspace.CodeInvalidArgument, "cannot read the request body")
	}
	if !utf8.Valid(body) {
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return workspace.Errorf(workspace.CodeInvalidArgument, "request body is empty: want a JSON object")
		}
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body: %s", interfaces.JSONProblem(err))
	}
	if dec.More() {
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body: trailing data after the JSON object")
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body: trailing data after the JSON object")
	}
	return nil
}
