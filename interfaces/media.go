package interfaces

import (
	"mime"
	"strconv"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// MediaTypeError is a request body's Content-Type or Content-Encoding
// refused: HTTP 415 with code INVALID_ARGUMENT, and Accept-Encoding:
// identity when Encoding is set. It unwraps to that *workspace.Error.
type MediaTypeError struct {
	Message string
	// Encoding is true when the Content-Encoding was refused.
	Encoding bool
}

func (e *MediaTypeError) Error() string { return e.Message }

// Unwrap gives the INVALID_ARGUMENT *workspace.Error the edges send.
func (e *MediaTypeError) Unwrap() error {
	return &workspace.Error{Code: workspace.CodeInvalidArgument, Message: e.Message}
}

// MediaPolicy says whether a body must be labelled: /v1 takes a body with
// no Content-Type at all as JSON (hand-written requests), MCP's Streamable
// HTTP requires the header.
type MediaPolicy struct {
	RequireContentType bool
}

// CheckMediaType checks the Content-Type and Content-Encoding values of a
// request body, the one policy of both HTTP edges: a Content-Type, when
// present (always, under RequireContentType), is given once and is
// application/json, with a charset parameter, if any, of utf-8; there is
// no Content-Encoding but identity.
func (p MediaPolicy) CheckMediaType(contentTypes, contentEncodings []string) *MediaTypeError {
	for _, v := range contentEncodings {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return &MediaTypeError{Message: "Content-Encoding " + strconv.Quote(workspace.Clip(c, 40)) + " is not supported: send the body as it is (identity)", Encoding: true}
			}
		}
	}
	switch len(contentTypes) {
	case 0:
		if !p.RequireContentType {
			return nil
		}
		return &MediaTypeError{Message: "Content-Type must be application/json"}
	case 1:
	default:
		return &MediaTypeError{Message: "Content-Type given more than once: send application/json"}
	}
	mt, params, err := mime.ParseMediaType(contentTypes[0])
	if err != nil || mt != "application/json" {
		return &MediaTypeError{Message: "Content-Type must be application/json"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &MediaTypeError{Message: "Content-Type charset must be utf-8: JSON text is UTF-8"}
	}
	return nil
}
