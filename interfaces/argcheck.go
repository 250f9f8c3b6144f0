package interfaces

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// checkValue finds, in v (arguments the schema refused, decoded
// generically), the first place that root refuses, and says why as an
// *ArgumentError. It reads the keywords the input schemas use (type,
// enum, minimum, maximum, properties, additionalProperties, required,
// items); jsonschema-go stays the judge of what is valid, and this only
// words its refusals (nil when it finds nothing, which
// TestCheckAgreesWithValidator and FuzzArgumentErrors hold never to
// happen for the input schemas).
func checkValue(tool string, root *jsonschema.Schema, v any) *ArgumentError {
	c := checker{tool: tool, root: root}
	return c.check(root, v, nil)
}

type checker struct {
	tool string
	root *jsonschema.Schema
}

// check checks v against s at the place path (object fields; "*" a map
// key, "[]" an array item).
func (c *checker) check(s *jsonschema.Schema, v any, path []string) *ArgumentError {
	if s == nil {
		return nil
	}
	if want, ok := wantTypes(s); ok {
		got := jsonTypeOf(v)
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			return c.fail(path, &ArgumentError{Problem: ProblemType, Want: strings.Join(want, " or "), Got: got})
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = fmt.Sprint(e)
		}
		return c.fail(path, &ArgumentError{Problem: ProblemEnum, Allowed: vals})
	}
	switch v := v.(type) {
	case float64:
		if (s.Minimum != nil && v < *s.Minimum) || (s.Maximum != nil && v > *s.Maximum) {
			return c.fail(path, &ArgumentError{Problem: ProblemRange, Min: s.Minimum, Max: s.Maximum})
		}
	case []any:
		for _, item := range v {
			if e := c.check(s.Items, item, itemPath(path)); e != nil {
				return e
			}
		}
	case map[string]any:
		return c.checkObject(s, v, path)
	}
	return nil
}

func (c *checker) checkObject(s *jsonschema.Schema, obj map[string]any, path []string) *ArgumentError {
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := s.Properties[k]; !ok && closed(s) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		e := &ArgumentError{Problem: ProblemUnknownField, Names: unknown, Allowed: fieldsOf(s)}
		if at, ok := declaredElsewhere(c.root, unknown[0], strings.Join(path, ".")); ok {
			e.Belongs = &at
		} else {
			e.Suggest = closest(unknown[0], e.Allowed)
		}
		return c.fail(path, e)
	}
	for _, k := range fieldsOf(s) {
		if val, ok := obj[k]; ok {
			if e := c.check(s.Properties[k], val, append(slices.Clip(path), k)); e != nil {
				return e
			}
		}
	}
	if s.AdditionalProperties != nil && !closed(s) {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if _, ok := s.Properties[k]; ok {
				continue
			}
			if e := c.check(s.AdditionalProperties, obj[k], append(slices.Clip(path), "*")); e != nil {
				return e
			}
		}
	}
	var missing []string
	for _, k := range s.Required {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return c.fail(path, &ArgumentError{Problem: ProblemMissingField, Names: missing})
	}
	return nil
}

// fail completes e with the tool and the field's path.
func (c *checker) fail(path []string, e *ArgumentError) *ArgumentError {
	e.Tool = c.tool
	e.Field = fieldPath(path)
	return e
}

// closed reports whether s allows no properties but its own
// (additionalProperties false, which jsonschema-go holds as {"not":{}}).
func closed(s *jsonschema.Schema) bool {
	a := s.AdditionalProperties
	return a != nil && a.Not != nil && reflect.ValueOf(*a.Not).IsZero()
}

// fieldsOf lists the properties of s in their declared order.
func fieldsOf(s *jsonschema.Schema) []string {
	var out []string
	for _, k := range s.PropertyOrder {
		if _, ok := s.Properties[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// declaredElsewhere returns the path of the object of root, other than
// the one at here, that declares field: the nearest to the top when there
// are several.
func declaredElsewhere(root *jsonschema.Schema, field, here string) (string, bool) {
	type node struct {
		s    *jsonschema.Schema
		path []string
	}
	queue := []node{{root, nil}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.s == nil {
			continue
		}
		at := strings.Join(n.path, ".")
		if _, ok := n.s.Properties[field]; ok && at != here {
			return at, true
		}
		for _, k := range fieldsOf(n.s) {
			queue = append(queue, node{n.s.Properties[k], append(slices.Clip(n.path), k)})
		}
	}
	return "", false
}

// wantTypes is the JSON Schema types s allows, if it names any.
func wantTypes(s *jsonschema.Schema) ([]string, bool) {
	switch {
	case s.Type != "":
		return []string{s.Type}, true
	case len(s.Types) > 0:
		return s.Types, true
	}
	return nil, false
}

// jsonTypeOf is the JSON Schema type of a generically decoded value: a
// number with no fraction is an integer.
func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if _, f := math.Modf(v); f == 0 {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func itemPath(path []string) []string {
	out := slices.Clone(path)
	if len(out) == 0 {
		return []string{"[]"}
	}
	out[len(out)-1] += "[]"
	return out
}

// fieldPath spells a place: request.filters.roles[], facets.*.
func fieldPath(path []string) string { return strings.Join(path, ".") }

// closest returns the name of names nearest to k in spelling, when it is
// near enough to be a slip (at most two edits, or one a prefix of the
// other): "collection" for "collections".
func closest(k string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(k), n)
		if len(k) >= 3 && (strings.HasPrefix(n, k) || strings.HasPrefix(k, n)) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b in bytes (field
// names are short; a long one costs at most its length times theirs).
func editDistance(a, b string) int {
	if len(a) > 64 {
		return len(a)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
