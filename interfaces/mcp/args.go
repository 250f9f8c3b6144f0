package mcpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tychora/tychora/interfaces"
)

// OpCreateToken names the body of POST /v1/tokens for ValidateArguments
// (its OpenAPI operationId): it is validated against the
// CreateTokenRequest schema, as a tool's body is against its input schema.
const OpCreateToken = "create_token"

// decodeArgs turns the raw arguments of a tools/call into T: it validates
// them against the tool's input schema first (so an unknown field, a wrong
// type or a missing required field is refused before any work), then
// decodes them strictly. Every failure is INVALID_ARGUMENT. Absent or null
// arguments count as {}.
func decodeArgs[T any](tool string, raw json.RawMessage) (T, error) {
	var zero T
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if err := ValidateArguments(tool, raw); err != nil {
		return zero, err
	}
	out, err := strictDecode[T](raw)
	if integralNumber(err) {
		// An integer written as 1.0 or 1e2, which JSON Schema (and the
		// schema check above) takes for an integer and encoding/json
		// does not: decode its value.
		if norm, nerr := renumber(raw); nerr == nil {
			out, err = strictDecode[T](norm)
		}
	}
	if err != nil {
		return zero, invalidArgument(tool, "arguments: %s", interfaces.JSONProblem(err))
	}
	return out, nil
}

func strictDecode[T any](raw []byte) (T, error) {
	var out T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return out, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return out, errors.New("trailing data after the JSON object")
	}
	return out, nil
}

// integralNumber reports whether err is encoding/json refusing a number
// for a Go integer. Behind the schema check, whose bounds hold every
// integer field within range, that is a number with a fraction or an
// exponent whose value is an integer.
func integralNumber(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && strings.HasPrefix(te.Value, "number")
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
// failure is an INVALID_ARGUMENT *workspace.Error worded the same on both
// edges, for the caller: the field's path and what it must be.
func ValidateArguments(tool string, raw json.RawMessage) error {
	if validated.has(tool, raw) {
		return nil
	}
	set := loadSchemas()
	rs, root := set.resolved[tool], set.named[bodySchemaName(tool)]
	if rs == nil || root == nil {
		return invalidArgument(tool, "unknown tool")
	}
	if !utf8.Valid(raw) {
		// The transports refuse such bytes already.
		return invalidArgument(tool, "arguments are not valid UTF-8")
	}
	if interfaces.LoneSurrogate(raw) {
		return invalidArgument(tool, "arguments hold an escaped lone surrogate (\\uD800 to \\uDFFF outside a high and low pair), which encodes no character")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The only type error of a generic decode: a number beyond
			// float64.
			return invalidArgument(tool, "arguments hold a number out of range: %s", clipN(strings.TrimPrefix(te.Value, "number "), 40))
		}
		return invalidArgument(tool, "arguments are not valid JSON")
	}
	if _, ok := v.(map[string]any); !ok {
		return invalidArgument(tool, "arguments must be a JSON object")
	}
	// A field given twice is refused: the generic decode the schema checks
	// keeps the last copy, while the strict decode into the request types
	// merges objects given twice, so values of the first copy would reach
	// the service unchecked (and a null would leave an earlier value in
	// place).
	if k, ok := duplicateKey(raw); ok {
		return invalidArgument(tool, "arguments give the field %s more than once", quote(k))
	}
	dropNulls(root, v)
	if err := rs.Validate(v); err != nil {
		return invalidArgument(tool, "arguments do not match the input schema: %s", schemaProblem(err, root, v))
	}
	validated.add(tool, raw)
	return nil
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

// schemaProblem words a validation error for the caller: where (the
// argument's path) and what it must be, from the keyword that failed and
// the schema at that place. jsonschema-go words its errors for Go
// programmers (reflect values, Go-formatted maps), so only its structure
// is read: the "validating <location>: " prefixes, innermost last, and
// the keyword that starts the innermost message.
func schemaProblem(err error, root *jsonschema.Schema, v any) string {
	msg := err.Error()
	loc := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		l, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		loc, msg = l, tail
	}
	what := mustBe(msg, schemaAt(root, loc), instanceAt(v, loc))
	if field := fieldPath(loc); field != "" {
		return field + ": " + what
	}
	return what
}

// mustBe words the failure msg of the value at a place whose schema is s
// (nil when unknown) and whose value is inst (nil when unknown or null).
func mustBe(msg string, s *jsonschema.Schema, inst any) string {
	keyword, detail, _ := strings.Cut(msg, ": ")
	if s == nil {
		return "is not valid here"
	}
	switch keyword {
	case "type":
		// "<instance> has type "<got>", want "<type>"": the tail is the
		// library's, whatever the instance printed as.
		got := ""
		if i := strings.LastIndex(detail, ` has type "`); i >= 0 {
			got, _, _ = strings.Cut(detail[i+len(` has type "`):], `"`)
		}
		want := s.Type
		if want == "" {
			want = strings.Join(s.Types, " or ")
		}
		return "must be " + typeName(want) + ", not " + typeName(got)
	case "enum":
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, fmt.Sprint(e))
		}
		return "must be one of " + strings.Join(vals, ", ")
	case "minimum", "maximum":
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			return "must be between " + num(*s.Minimum) + " and " + num(*s.Maximum)
		case s.Minimum != nil:
			return "must be at least " + num(*s.Minimum)
		case s.Maximum != nil:
			return "must be at most " + num(*s.Maximum)
		}
	case "required":
		obj, _ := inst.(map[string]any)
		var missing []string
		for _, k := range s.Required {
			if _, ok := obj[k]; !ok {
				missing = append(missing, quote(k))
			}
		}
		return plural(len(missing), "missing required field ", "missing required fields ") + strings.Join(missing, ", ")
	}
	if strings.HasPrefix(msg, "unexpected additional properties") {
		obj, _ := inst.(map[string]any)
		var unknown []string
		for k := range obj {
			if _, ok := s.Properties[k]; !ok {
				unknown = append(unknown, quote(k))
			}
		}
		slices.Sort(unknown)
		if len(unknown) == 0 {
			return "unknown field"
		}
		if len(unknown) > 5 {
			unknown = append(unknown[:5], "…")
		}
		return plural(len(unknown), "unknown field ", "unknown fields ") + strings.Join(unknown, ", ")
	}
	return "is not valid here"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// typeName is a JSON Schema type as a phrase.
func typeName(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	case "number":
		// The validator calls a number with no fraction an integer.
		return "a number with a fraction"
	case "":
		return "a value of another type"
	}
	return "a " + t
}

// quote spells a field name for a message, cut short.
func quote(k string) string {
	return strconv.Quote(clipN(k, 60))
}

// clipN shortens s to at most n bytes of valid UTF-8.
func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = strings.ToValidUTF8(s[:n], "")
	return s + "…"
}

// schemaAt returns the sub-schema of root at a location of the validator
// (/properties/request/properties/limit, .../items, .../additionalProperties),
// or nil.
func schemaAt(root *jsonschema.Schema, loc string) *jsonschema.Schema {
	s := root
	segs := locSegments(loc)
	for i := 0; s != nil && i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 >= len(segs) {
				return nil
			}
			i++
			s = s.Properties[segs[i]]
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		default:
			return nil
		}
	}
	return s
}

// instanceAt returns the value of v at loc when loc names properties only
// (an array item or a map value is not named by the location), else nil.
func instanceAt(v any, loc string) any {
	segs := locSegments(loc)
	for i := 0; i < len(segs); i += 2 {
		m, ok := v.(map[string]any)
		if segs[i] != "properties" || i+1 >= len(segs) || !ok {
			return nil
		}
		v = m[segs[i+1]]
	}
	return v
}

func locSegments(loc string) []string {
	if !strings.HasPrefix(loc, "/") {
		return nil
	}
	return strings.Split(loc[1:], "/")
}

// fieldPath turns a schema location (/properties/request/properties/limit)
// into the argument's path (request.limit); "" for the root.
func fieldPath(loc string) string {
	var parts []string
	segs := locSegments(loc)
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				parts = append(parts, segs[i+1])
				i++
			}
		case "additionalProperties":
			parts = append(parts, "*")
		case "items":
			if len(parts) > 0 {
				parts[len(parts)-1] += "[]"
			}
		default:
			parts = append(parts, segs[i])
		}
	}
	return strings.Join(parts, ".")
}
