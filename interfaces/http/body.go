package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// readBody reads a POST body for decoding. In DESIGN §8's order, after the
// guard's checks: a body over the limit is 413; then a Content-Type other
// than application/json (none at all is taken, for curl and the like) or a
// Content-Encoding is 415; then an empty body, bytes that are not UTF-8
// (which JSON text must be) and escaped lone surrogates (both of which
// encoding/json would quietly turn into U+FFFD) are INVALID_ARGUMENT.
func readBody(r *http.Request) ([]byte, error) {
	var body []byte
	var err error
	if bb, ok := r.Body.(*bufferedBody); ok {
		body = bb.bytes // read by the guard already
	} else {
		body, err = io.ReadAll(r.Body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errBodyTooLarge
		}
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "cannot read the request body")
	}
	if err := v1Media.CheckMediaType(r.Header.Values("Content-Type"), r.Header.Values("Content-Encoding")); err != nil {
		return nil, err
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "request body is empty: want a JSON object")
	case !utf8.Valid(body):
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "request body is not valid UTF-8")
	case interfaces.LoneSurrogate(body):
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "request body holds an escaped lone surrogate (\\uD800 to \\uDFFF outside a high and low pair), which encodes no character")
	}
	return body, nil
}

// v1Media is the media type policy of /v1: a body with no Content-Type
// is taken as JSON, for hand-written requests.
var v1Media = interfaces.MediaPolicy{}

// decodeBody reads r's body (readBody), checks it against the input
// schema of op (a tool, or interfaces.OpCreateToken) and decodes it
// strictly into v (interfaces.DecodeInto): the same checks, in the same
// words, as the MCP tools' arguments.
func (h *handlers) decodeBody(r *http.Request, op string, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return interfaces.DecodeInto(op, body, v)
}
