package mcpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/tychora/tychora/workspace"
)

// methodRule is how the SDK's server takes one method it receives.
type methodRule struct {
	notification bool // sent without an id (else a request, with one)
	params       bool // params required
}

// serverMethods are the methods the SDK's server receives: the table
// (serverMethodInfos) go-sdk v1.8.0 checks every message of an HTTP POST
// against before it runs any, answering a plain-text 400 for the whole
// body when one fails. tychora adds no custom methods.
// TestServerMethodsAreTheSDKs checks this copy against the SDK's source
// in both directions, and TestServerMethodsMatchSDK against its answers.
var serverMethods = map[string]methodRule{
	"initialize":                       {params: true},
	"ping":                             {},
	"server/discover":                  {},
	"tools/list":                       {},
	"tools/call":                       {params: true},
	"resources/list":                   {},
	"resources/templates/list":         {},
	"resources/read":                   {params: true},
	"resources/subscribe":              {params: true},
	"resources/unsubscribe":            {params: true},
	"subscriptions/listen":             {params: true},
	"prompts/list":                     {},
	"prompts/get":                      {params: true},
	"completion/complete":              {params: true},
	"logging/setLevel":                 {params: true},
	"notifications/initialized":        {notification: true},
	"notifications/cancelled":          {notification: true},
	"notifications/roots/list_changed": {notification: true},
	"notifications/progress":           {notification: true, params: true},
}

// frame is a POST body that passed parseFrame, for screen.
type frame struct {
	msgs  []rpcMsg
	batch bool
}

type frameKey struct{}

// screen answers, over HTTP, what the SDK's method table would refuse with
// a plain-text 400 for the whole body, the way JSON-RPC and stdio answer
// it, and reports whether it answered:
//
//   - a request for a method the server does not have: the JSON-RPC error
//     -32601 with the request's id (at 2026-07-28 and later the SDK
//     answers that itself, with the 404 SEP-2575 asks for);
//   - a request for a notification's method, or without the params its
//     method needs: -32600 with its id;
//   - a notification the server does not take (an unknown method, or a
//     request's method without an id): dropped, as JSON-RPC wants and as
//     the SDK does over stdio; a body of nothing else is accepted (202).
//
// Errors go out as a 400 with an application/json body (one response, or
// for a batch one per request, the others "not run"), as the SDK sends
// its own JSON-RPC refusals. A request naming a session the SDK does not
// know is left to the SDK (404).
func (h *HTTPHandler) screen(w http.ResponseWriter, r *http.Request, f *frame) bool {
	stateless := r.Header.Get("Mcp-Protocol-Version") >= statelessSince
	keep := make([][]byte, 0, len(f.msgs))
	refusals := make([][]byte, len(f.msgs))
	refused, dropped := false, false
	for i, m := range f.msgs {
		if !m.hasMethod {
			keep = append(keep, m.raw) // a response
			continue
		}
		rule, known := serverMethods[m.method]
		switch {
		case !known && m.call() && stateless:
		case !known && m.call():
			refusals[i], refused = rpcErrorResponse(m.idJSON, rpcMethodNotFound, fmt.Sprintf("Method not found: %q", workspace.Clip(m.method, maxMessage))), true
			continue
		case !known, !rule.notification && m.notification():
			dropped = true
			continue
		case rule.notification && m.call():
			refusals[i], refused = rpcErrorResponse(m.idJSON, rpcInvalidRequest, fmt.Sprintf("Invalid Request: %q is a notification, sent without an id", m.method)), true
			continue
		case rule.params && !m.hasParams:
			if m.notification() {
				dropped = true
				continue
			}
			refusals[i], refused = rpcErrorResponse(m.idJSON, rpcInvalidRequest, fmt.Sprintf("Invalid Request: %q needs params", m.method)), true
			continue
		}
		keep = append(keep, m.raw)
	}
	if !refused && !dropped {
		return false
	}
	if sid := r.Header.Get("Mcp-Session-Id"); !stateless && sid != "" && !h.liveSession(sid) {
		return false // the SDK's 404: the client starts a new session
	}
	switch {
	case refused && !f.batch:
		writeRPC(w, append(refusals[0], '\n'))
	case refused:
		// A batch runs whole or not at all, as with the SDK; every
		// request in it gets an answer.
		out := [][]byte{}
		for i, m := range f.msgs {
			switch {
			case refusals[i] != nil:
				out = append(out, refusals[i])
			case m.call():
				out = append(out, rpcErrorResponse(m.idJSON, rpcInvalidRequest, "Invalid Request: not run: another request of the batch was refused"))
			}
		}
		writeRPC(w, append(append([]byte("["), bytes.Join(out, []byte(","))...), "]\n"...))
	case len(keep) == 0:
		w.WriteHeader(http.StatusAccepted)
	default:
		body := append(append([]byte("["), bytes.Join(keep, []byte(","))...), ']')
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		return false
	}
	return true
}

// liveSession reports whether the SDK holds a session with id sid.
func (h *HTTPHandler) liveSession(sid string) bool {
	for ss := range h.server.Sessions() {
		if ss.ID() == sid {
			return true
		}
	}
	return false
}
