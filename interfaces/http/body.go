package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// opCreateToken names the body of POST /v1/tokens for Options.Validate
// (mcpapi.OpCreateToken, its OpenAPI operationId).
const opCreateToken = "create_token"

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
	if err := checkMediaType(r.Header); err != nil {
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

// decodeBody reads r's body (readBody), validates it against the schema
// of op when a validator is set, and decodes it strictly into v.
func (h *handlers) decodeBody(r *http.Request, op string, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if h.validate != nil {
		if err := h.validate(op, body); err != nil {
			return err
		}
	}
	return decodeJSON(body, v)
}

// decodeJSON strictly decodes one JSON value of body into v: unknown
// fields and trailing data are INVALID_ARGUMENT.
func decodeJSON(body []byte, v any) error {
	err := strictDecode(body, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		// An integer written as 1.0 or 1e2, which JSON Schema (and the
		// validator) takes for an integer and encoding/json does not:
		// decode its value, as encoding/json spells it again.
		var g any
		if json.Unmarshal(body, &g) == nil {
			if norm, merr := json.Marshal(g); merr == nil {
				reflect.ValueOf(v).Elem().SetZero()
				err = strictDecode(norm, v)
			}
		}
	}
	switch {
	case errors.Is(err, errTrailing):
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body: trailing data after the JSON object")
	case err != nil:
		return workspace.Errorf(workspace.CodeInvalidArgument, "request body: %s", interfaces.JSONProblem(err))
	}
	return nil
}

var errTrailing = errors.New("trailing data")

func strictDecode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errTrailing
	}
	return nil
}

// mediaTypeError refuses a body's Content-Type or Content-Encoding: 415
// with code INVALID_ARGUMENT (and Accept-Encoding: identity when the
// encoding was refused).
type mediaTypeError struct {
	msg      string
	encoding bool
}

func (e *mediaTypeError) Error() string { return e.msg }

// checkMediaType checks the headers of a POST body: a Content-Type, when
// present, is application/json (a charset parameter, if any, utf-8);
// there is no Content-Encoding but identity. No Content-Type at all is
// taken as JSON, for hand-written requests.
func checkMediaType(h http.Header) error {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return &mediaTypeError{msg: "Content-Encoding " + strconv.Quote(clipHeader(c)) + " is not supported: send the body as it is", encoding: true}
			}
		}
	}
	cts := h.Values("Content-Type")
	switch len(cts) {
	case 0:
		return nil
	case 1:
	default:
		return &mediaTypeError{msg: "Content-Type given more than once: send application/json"}
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

func clipHeader(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
