package interfaces

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Decode turns the arguments of a tools/call into T: absent or null
// arguments count as {} (an MCP client may send none), then DecodeInto.
func Decode[T any](tool string, raw json.RawMessage) (T, error) {
	var out T
	err := DecodeInto(tool, toolArguments(raw), &out)
	return out, err
}

// toolArguments is raw, or {} when a call gave no arguments or null.
func toolArguments(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}

// DecodeInto decodes raw, the arguments of tool or the body of its /v1
// route, into v (a pointer): ValidateArguments first, so that an unknown
// field, a wrong type or a missing required field is refused before any
// work, then DecodeStrict, then the rules beyond the schema (search takes
// a request or a run to replay). Every failure is an *ArgumentError.
func DecodeInto(tool string, raw json.RawMessage, v any) error {
	if err := ValidateArguments(tool, raw); err != nil {
		return err
	}
	err := DecodeStrict(raw, v)
	if integralNumber(err) {
		// An integer written as 1.0 or 1e2, which JSON Schema (and the
		// schema check above) takes for an integer and encoding/json
		// does not: decode its value.
		if norm, nerr := renumber(raw); nerr == nil {
			reflect.ValueOf(v).Elem().SetZero()
			err = DecodeStrict(norm, v)
		}
	}
	if err != nil {
		return &ArgumentError{Tool: tool, Problem: ProblemDecode, Detail: JSONProblem(err)}
	}
	if c, ok := v.(argsChecker); ok {
		if e := c.checkArgs(); e != nil {
			e.Tool = tool
			return e
		}
	}
	return nil
}

// argsChecker is arguments with a rule beyond their schema, checked after
// the decode.
type argsChecker interface {
	checkArgs() *ArgumentError
}

// checkArgs: a search takes a request or the id of a run to replay.
func (a SearchArgs) checkArgs() *ArgumentError {
	if (a.Request == nil) == (a.ReplayRunID == "") {
		return &ArgumentError{Problem: ProblemExclusive, Names: []string{"request", "replay_run_id"}}
	}
	return nil
}

// ErrTrailingData is DecodeStrict's error for bytes after the JSON value.
var ErrTrailingData = errors.New("trailing data after the JSON value")

// DecodeStrict decodes the one JSON value of b into v, refusing unknown
// fields and anything but white space after the value (ErrTrailingData).
// It is the strict decoder of every edge; Decode adds the schema check.
func DecodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

// integralNumber reports whether err is encoding/json refusing a JSON
// number for a Go integer. Behind the schema check, whose bounds hold
// every integer field within range, that is a number with a fraction or
// an exponent whose value is an integer.
func integralNumber(err error) bool {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return false
	}
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// renumber re-encodes raw through encoding/json's generic values, which
// spells every integral number as an integer (1.0 becomes 1).
func renumber(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// ValidateArguments checks raw (a tool's argument object, or the body of
// its /v1 route; or, for OpCreateToken, the body of POST /v1/tokens)
// against the input schema. Before the schema sees them, escaped lone
// surrogates (which encoding/json would quietly turn into U+FFFD) are
// refused, and a null given for an optional property counts as absent (a
// client echoing "next_cursor": null back as "cursor": null). Every
// failure is an *ArgumentError, worded the same on both edges: the field's
// path, what is wrong, and what is allowed there.
func ValidateArguments(tool string, raw json.RawMessage) error {
	if validated.has(tool, raw) {
		return nil
	}
	set := loadSchemas()
	rs, root := set.resolved[tool], set.named[bodySchemaName(tool)]
	if rs == nil || root == nil {
		return &ArgumentError{Tool: tool, Problem: ProblemUnknownTool}
	}
	if !utf8.Valid(raw) {
		// The transports refuse such bytes already.
		return &ArgumentError{Tool: tool, Problem: ProblemNotUTF8}
	}
	if LoneSurrogate(raw) {
		return &ArgumentError{Tool: tool, Problem: ProblemLoneSurrogate}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The only type error of a generic decode: a number beyond
			// float64.
			return &ArgumentError{Tool: tool, Problem: ProblemNumberOutOfRange, Detail: outOfRange(raw)}
		}
		return &ArgumentError{Tool: tool, Problem: ProblemNotJSON}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ArgumentError{Tool: tool, Problem: ProblemNotObject}
	}
	// A field given twice is refused: the generic decode the schema checks
	// keeps the last copy, while the strict decode into the request types
	// merges objects given twice, so values of the first copy would reach
	// the service unchecked (and a null would leave an earlier value in
	// place).
	if k, ok := duplicateKey(raw); ok {
		return &ArgumentError{Tool: tool, Problem: ProblemDuplicateField, Name: k}
	}
	dropNulls(root, v)
	if err := rs.Validate(v); err != nil {
		// jsonschema-go words its errors for Go programmers and gives no
		// structure to read: checkValue finds the same problem in the
		// schema and the value (TestCheckAgreesWithValidator).
		if ae := checkValue(tool, root, v); ae != nil {
			return ae
		}
		return &ArgumentError{Tool: tool, Problem: ProblemSchema}
	}
	validated.add(tool, raw)
	return nil
}

// outOfRange returns the first number literal of raw (valid JSON) that
// float64 cannot hold.
func outOfRange(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if n, ok := tok.(json.Number); ok {
			if _, err := n.Float64(); err != nil {
				return string(n)
			}
		}
	}
}

// bodySchemaName is the name of the schema ValidateArguments checks the
// body of tool against.
func bodySchemaName(tool string) string {
	if tool == OpCreateToken {
		return "CreateTokenRequest"
	}
	return toolInputName[tool]
}

// validated remembers argument objects that passed validation, by tool and
// exact bytes. Validation is a function of those alone (the schemas are
// fixed), and a busy owner sees the same arguments again and again (the
// searches its ranking cache answers); validating one costs more than the
// cached answer's fit (the validator's recursion grows each request's
// goroutine stack). Small objects only; cleared when full.
var validated = &argMemo{m: map[string]struct{}{}}

const (
	argMemoEntries  = 4096
	argMemoMaxBytes = 2048
)

type argMemo struct {
	mu sync.RWMutex
	m  map[string]struct{}
}

func (a *argMemo) has(tool string, raw []byte) bool {
	if len(raw) > argMemoMaxBytes {
		return false
	}
	a.mu.RLock()
	_, ok := a.m[tool+"\x00"+string(raw)]
	a.mu.RUnlock()
	return ok
}

func (a *argMemo) add(tool string, raw []byte) {
	if len(raw) > argMemoMaxBytes {
		return
	}
	a.mu.Lock()
	if len(a.m) >= argMemoEntries {
		clear(a.m)
	}
	a.m[tool+"\x00"+string(raw)] = struct{}{}
	a.mu.Unlock()
}

// dropNulls deletes, in v, every null given for a property s declares but
// does not require, at any depth, and reports whether it deleted any. A
// null anywhere else (a required property, an array element, a map value)
// stays, for the schema to refuse.
func dropNulls(s *jsonschema.Schema, v any) bool {
	if s == nil {
		return false
	}
	dropped := false
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			ps, declared := s.Properties[k]
			switch {
			case c == nil && declared && !slices.Contains(s.Required, k):
				delete(v, k)
				dropped = true
			case declared:
				dropped = dropNulls(ps, c) || dropped
			default:
				dropped = dropNulls(s.AdditionalProperties, c) || dropped
			}
		}
	case []any:
		for _, c := range v {
			dropped = dropNulls(s.Items, c) || dropped
		}
	}
	return dropped
}

// duplicateKey returns a member name that one object of raw (valid JSON)
// holds twice.
func duplicateKey(raw []byte) (string, bool) {
	type level struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*level
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		d, isDelim := tok.(json.Delim)
		switch {
		case isDelim && (d == '}' || d == ']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].keys != nil {
				stack[len(stack)-1].expectKey = true
			}
		case top != nil && top.keys != nil && top.expectKey:
			k, _ := tok.(string)
			if top.keys[k] {
				return k, true
			}
			top.keys[k] = true
			top.expectKey = false
		case isDelim:
			l := &level{}
			if d == '{' {
				l.keys, l.expectKey = map[string]bool{}, true
			}
			stack = append(stack, l)
		case top != nil && top.keys != nil:
			top.expectKey = true
		}
	}
}
