package mcpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// JSON-RPC error codes of a message the checks before the SDK refuse.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
)

// rpcMsg is one message of a frame as the checks before the SDK see it.
type rpcMsg struct {
	raw json.RawMessage
	// id is the id as the SDK tells ids apart ("s:" and the string, or
	// "n:" and the integer), "" for none; idJSON is how the SDK spells it
	// in a response.
	id     string
	idJSON json.RawMessage
	// method is the method of a request or notification; hasMethod is
	// false for a response.
	method    string
	hasMethod bool
	hasParams bool
}

// call reports whether m is a request, which is answered.
func (m rpcMsg) call() bool { return m.hasMethod && m.id != "" }

// notification reports whether m is a notification, which is not.
func (m rpcMsg) notification() bool { return m.hasMethod && m.id == "" }

// parseFrame splits body, one message or a batch of them, into its
// messages, or says why it cannot be one (code 0 for a body to pass on). Not JSON at all is a parse
// error; JSON that is not a message object (or a batch of them) the SDK
// can decode and answer correctly is an invalid request: "jsonrpc" other
// than "2.0"; an id that is not a string or an integer (MCP: not null, and
// the SDK decodes a number as a float64 and answers with its integer part,
// so 1.5 would be answered as 1 and only integers up to 2^53 keep their
// value); a method that is not a string; a response without an id; an
// error member that is not an error object; a batch holding one request
// id twice; or nesting deeper than the SDK decodes (maxRPCDepth). The SDK
// answers these with a plain-text 400 over HTTP, and others with a wrong
// id; a JSON-RPC client expects the error response with a null id that
// JSON-RPC 2.0 and the MCP transports allow. What it takes, the SDK's
// jsonrpc.DecodeMessage decodes alike (FuzzParseFrameDecodes).
func parseFrame(body []byte) (msgs []rpcMsg, batch bool, code int, msg string) {
	if !json.Valid(body) {
		return nil, false, rpcParseError, "Parse error: the message is not valid JSON"
	}
	if tooDeep(body, maxRPCDepth) {
		return nil, false, rpcInvalidRequest, fmt.Sprintf("Invalid Request: the message nests deeper than %d levels", maxRPCDepth)
	}
	var raws []json.RawMessage
	switch b := bytes.TrimLeft(body, " \t\r\n"); {
	case len(b) > 0 && b[0] == '[':
		if json.Unmarshal(body, &raws) != nil || len(raws) == 0 {
			return nil, true, rpcInvalidRequest, "Invalid Request: an empty or malformed batch"
		}
		batch = true
	case len(b) > 0 && b[0] == '{':
		raws = []json.RawMessage{body}
	default:
		return nil, false, rpcInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object"
	}
	ids := map[string]bool{}
	msgs = make([]rpcMsg, 0, len(raws))
	for _, raw := range raws {
		m, why := parseMessage(raw)
		if why != "" {
			return nil, batch, rpcInvalidRequest, "Invalid Request: " + why
		}
		// The SDK tells the requests of a batch apart by id: two with the
		// same id end its stdio session, and over HTTP one of them would
		// go unanswered. Responses (no method) have ids of the other
		// side's requests and are not counted; notifications have none.
		if m.call() {
			if ids[m.id] {
				return nil, batch, rpcInvalidRequest, "Invalid Request: a batch holds two requests with the same id"
			}
			ids[m.id] = true
		}
		msgs = append(msgs, m)
	}
	return msgs, batch, 0, ""
}

// maxRPCDepth is the deepest nesting the SDK decodes.
const maxRPCDepth = 1000

// parseMessage reads m, or says what makes it no JSON-RPC message the
// SDK handles correctly. Member names match exactly, as the SDK's decoder
// matches them.
func parseMessage(raw json.RawMessage) (m rpcMsg, why string) {
	m.raw = raw
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || f == nil {
		return m, "a JSON-RPC message is a JSON object"
	}
	if v, ok := f["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		var tag string
		if !ok || json.Unmarshal(v, &tag) != nil || tag != "2.0" {
			return m, `a JSON-RPC message has "jsonrpc": "2.0"`
		}
	}
	method, hasMethod := f["method"]
	if hasMethod {
		if kind(method) != '"' || json.Unmarshal(method, &m.method) != nil {
			return m, "the method is a string"
		}
		m.hasMethod = true
	}
	if v, ok := f["id"]; ok {
		if m.id, m.idJSON, why = parseID(v); why != "" {
			return m, why
		}
	}
	if !hasMethod && m.id == "" {
		return m, "a message without a method is a response, which has an id"
	}
	_, m.hasParams = f["params"]
	if v, ok := f["error"]; ok && kind(v) != 'n' {
		var e map[string]json.RawMessage
		if kind(v) != '{' || json.Unmarshal(v, &e) != nil {
			return m, "the error member is an object"
		}
		if c, ok := e["code"]; ok && kind(c) != 'n' {
			if _, err := strconv.ParseInt(string(bytes.TrimSpace(c)), 10, 64); err != nil {
				return m, "the error code is an integer"
			}
		}
		if msg, ok := e["message"]; ok && kind(msg) != '"' && kind(msg) != 'n' {
			return m, "the error message is a string"
		}
	}
	return m, ""
}

// parseID reads the id v: its key as the SDK tells ids apart ("s:" and
// the string, or "n:" and the integer) and its spelling in a response, or
// why it is no id the SDK handles correctly.
func parseID(v json.RawMessage) (key string, spelled json.RawMessage, why string) {
	switch kind(v) {
	case 'n':
		// MCP: "Unlike base JSON-RPC, the ID MUST NOT be null." The SDK
		// would take such a request for a notification and never answer
		// it.
		return "", nil, "the id is a string or an integer, not null"
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", nil, "the id is a string or an integer"
		}
		return "s:" + s, bytes.TrimSpace(v), ""
	case '0':
		n, ok := integerID(bytes.TrimSpace(v))
		if !ok {
			return "", nil, fmt.Sprintf("a numeric id is an integer from -%d to %d", maxIntegerID, maxIntegerID)
		}
		s := strconv.FormatInt(n, 10)
		return "n:" + s, json.RawMessage(s), ""
	}
	return "", nil, "the id is a string or an integer"
}

// maxIntegerID is the largest numeric id the SDK keeps exactly: it
// decodes ids as float64, which holds every integer up to 2^53.
const maxIntegerID = 1 << 53

// integerID returns the value of the JSON number num when it is an
// integer (in any spelling: 7, 7.0, 0.7e1, 70e-1) of at most maxIntegerID
// in magnitude. It reads the digits itself: parsing as a float would round
// 1.0000000000000000001 to 1, and big numbers would cost an exponent's
// worth of memory.
func integerID(num []byte) (int64, bool) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	mant, exp := num, []byte(nil)
	if i := bytes.IndexAny(num, "eE"); i >= 0 {
		mant, exp = num[:i], num[i+1:]
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := append(append([]byte(nil), intPart...), frac...)
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return 0, true // zero, whatever the exponent
	}
	// value = digits × 10^scale
	scale := -len(frac)
	if len(exp) > 0 {
		e, err := strconv.Atoi(string(exp)) // "+5", "-5", "5"
		if err != nil || e > 1000 || e < -1000 {
			return 0, false // far out of range, or far from an integer
		}
		scale += e
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits, scale = digits[:len(digits)-1], scale+1
	}
	if scale < 0 || len(digits)+scale > 16 { // 2^53 has 16 digits
		return 0, false
	}
	var v uint64
	for _, d := range digits {
		v = v*10 + uint64(d-'0')
	}
	for ; scale > 0; scale-- {
		v *= 10
	}
	if v > maxIntegerID {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// kind classifies a JSON value by its first byte: '"' string, '0' number,
// 'n' null, '{' object, '[' array, 't' or 'f' boolean.
func kind(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	default:
		return c
	}
}

// tooDeep reports whether the JSON text b nests objects and arrays deeper
// than max.
func tooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// rpcErrorLine is a JSON-RPC error response with a null id, and a newline.
func rpcErrorLine(code int, msg string) []byte {
	return append(rpcErrorResponse(nil, code, msg), '\n')
}

// rpcErrorResponse is a JSON-RPC error response to the request with id
// (null when id is nil).
func rpcErrorResponse(id json.RawMessage, code int, msg string) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return out
}
