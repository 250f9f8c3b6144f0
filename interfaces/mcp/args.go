package mcpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/tychora/tychora/interfaces"
)

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
	var out T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return zero, invalidArgument(tool, "arguments: %s", interfaces.JSONProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return zero, invalidArgument(tool, "arguments: trailing data after the JSON object")
	}
	return out, nil
}

// ValidateArguments checks raw (a tool's argument object, or the body of
// its /v1 route) against the tool's input schema. Every failure is an
// INVALID_ARGUMENT *workspace.Error worded the same on both edges.
func ValidateArguments(tool string, raw json.RawMessage) error {
	if validated.has(tool, raw) {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return invalidArgument(tool, "arguments are not valid JSON: %s", interfaces.JSONProblem(err))
	}
	if _, ok := v.(map[string]any); !ok {
		return invalidArgument(tool, "arguments must be a JSON object")
	}
	rs := inputResolved(tool)
	if rs == nil {
		return invalidArgument(tool, "unknown tool")
	}
	if err := rs.Validate(v); err != nil {
		return invalidArgument(tool, "arguments do not match the input schema: %s", schemaProblem(err))
	}
	validated.add(tool, raw)
	return nil
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

// schemaProblem words a validation error: the innermost reason, with the
// chain of "validating ..." prefixes reduced to the failing location.
func schemaProblem(err error) string {
	msg := err.Error()
	// jsonschema-go nests "validating <location>: " prefixes, outermost
	// first; the last one names the failing property.
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
	if field := fieldPath(loc); field != "" {
		return field + ": " + msg
	}
	return msg
}

// fieldPath turns a schema location (/properties/request/properties/limit)
// into the argument's path (request.limit); "" for the root.
func fieldPath(loc string) string {
	if !strings.HasPrefix(loc, "/") {
		return ""
	}
	var parts []string
	segs := strings.Split(loc[1:], "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "additionalProperties":
			if segs[i] == "properties" && i+1 < len(segs) {
				parts = append(parts, segs[i+1])
				i++
			}
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
