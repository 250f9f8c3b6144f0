package interfaces

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// Problem is what is wrong with an argument.
type Problem int

// The problems an *ArgumentError reports.
const (
	// ProblemSchema: the schema refuses the value in a way none of the
	// others names.
	ProblemSchema Problem = iota
	ProblemUnknownTool
	ProblemNotUTF8
	ProblemLoneSurrogate
	ProblemNotJSON
	ProblemNotObject
	// ProblemNumberOutOfRange: Detail is the literal float64 cannot hold.
	ProblemNumberOutOfRange
	// ProblemDuplicateField: Name is the field given twice.
	ProblemDuplicateField
	// ProblemType: Want and Got are JSON Schema types.
	ProblemType
	// ProblemEnum: Allowed lists the values.
	ProblemEnum
	// ProblemRange: Min and Max bound the value (either may be nil).
	ProblemRange
	// ProblemMissingField: Names are the missing fields.
	ProblemMissingField
	// ProblemUnknownField: Names are the unknown fields, Allowed the
	// fields of the object, Belongs (when set) the object that declares
	// the first unknown one.
	ProblemUnknownField
	// ProblemExclusive: Names are fields of which exactly one is given.
	ProblemExclusive
	// ProblemDecode: the strict decode refused what the schema took;
	// Detail words it (JSONProblem).
	ProblemDecode
)

// ArgumentError is arguments refused before any work: a tool's argument
// object, the body of its /v1 route, or the body of POST /v1/tokens. It
// names the field (its path in the arguments), what is wrong there and
// what is allowed; for a field at the wrong level, where it belongs. Its
// code is INVALID_ARGUMENT: it unwraps to a *workspace.Error carrying its
// message, so every edge sends it as any other error.
type ArgumentError struct {
	// Tool is the tool (or OpCreateToken) whose arguments these are.
	Tool string
	// Field is the path of the refused value in the arguments
	// ("request.limit"; "*" stands for any key of a map, "[]" for any
	// item of an array), "" for the arguments as a whole.
	Field   string
	Problem Problem
	// Name is the field given twice (ProblemDuplicateField).
	Name string
	// Names are the fields missing, unknown or exclusive.
	Names []string
	// Allowed lists what may stand there: the values of an enum, the
	// fields of an object.
	Allowed []string
	// Belongs, for an unknown field that the arguments declare at another
	// place, is the path of the object that declares it ("" is the top
	// level); nil when the field is declared nowhere else.
	Belongs *string
	// Suggest, for an unknown field declared nowhere else, is an allowed
	// field of a close spelling ("" when none is close).
	Suggest string
	// Want and Got are JSON Schema types (ProblemType).
	Want, Got string
	// Min and Max bound a number (ProblemRange).
	Min, Max *float64
	// Detail is the out-of-range literal, or the decoder's words.
	Detail string
}

// maxArgumentMessage bounds the message of an ArgumentError, which quotes
// the caller's field names.
const maxArgumentMessage = 400

func (e *ArgumentError) Error() string { return e.Message() }

// Unwrap gives the INVALID_ARGUMENT *workspace.Error the edges send.
func (e *ArgumentError) Unwrap() error {
	return &workspace.Error{Code: workspace.CodeInvalidArgument, Message: e.Message()}
}

// Message is the caller's message: "tool: what is wrong", bounded.
func (e *ArgumentError) Message() string {
	return workspace.Clip(e.Tool+": "+e.what(), maxArgumentMessage)
}

func (e *ArgumentError) what() string {
	switch e.Problem {
	case ProblemUnknownTool:
		return "unknown tool"
	case ProblemNotUTF8:
		return "arguments are not valid UTF-8"
	case ProblemLoneSurrogate:
		return "arguments hold an escaped lone surrogate (\\uD800 to \\uDFFF outside a high and low pair), which encodes no character"
	case ProblemNotJSON:
		return "arguments are not valid JSON"
	case ProblemNotObject:
		return "arguments must be a JSON object"
	case ProblemNumberOutOfRange:
		return "arguments hold a number out of range: " + workspace.Clip(e.Detail, 40)
	case ProblemDuplicateField:
		return "arguments give the field " + quoteField(e.Name) + " more than once"
	case ProblemExclusive:
		return "give exactly one of " + strings.Join(e.Names, " and ")
	case ProblemDecode:
		return "arguments: " + e.Detail
	}
	const lead = "arguments do not match the input schema: "
	if e.Field == "" {
		return lead + e.mustBe()
	}
	return lead + e.Field + ": " + e.mustBe()
}

// mustBe words a schema problem at e.Field.
func (e *ArgumentError) mustBe() string {
	switch e.Problem {
	case ProblemType:
		return "must be " + typeName(e.Want) + ", not " + typeName(e.Got)
	case ProblemEnum:
		return "must be one of " + strings.Join(e.Allowed, ", ")
	case ProblemRange:
		switch {
		case e.Min != nil && e.Max != nil:
			return "must be between " + num(*e.Min) + " and " + num(*e.Max)
		case e.Min != nil:
			return "must be at least " + num(*e.Min)
		case e.Max != nil:
			return "must be at most " + num(*e.Max)
		}
	case ProblemMissingField:
		return plural(len(e.Names), "missing required field ", "missing required fields ") + quoteFields(e.Names)
	case ProblemUnknownField:
		return e.unknown()
	}
	return "is not valid here"
}

// unknown words unknown fields: which, where the first one belongs when
// the arguments declare it elsewhere, and the fields allowed here.
func (e *ArgumentError) unknown() string {
	var b strings.Builder
	names := e.Names
	if len(names) > 5 {
		names = append(slices.Clip(names[:5]), "…")
	}
	b.WriteString(plural(len(e.Names), "unknown field ", "unknown fields "))
	b.WriteString(quoteFields(names))
	switch {
	case e.Belongs != nil && len(e.Names) > 0:
		fmt.Fprintf(&b, ": %s belongs %s, as in %s", quoteField(e.Names[0]), place(*e.Belongs), nested(*e.Belongs, e.Names[0]))
	case e.Suggest != "":
		fmt.Fprintf(&b, " (did you mean %s?)", quoteField(e.Suggest))
	}
	if len(e.Allowed) > 0 {
		here := "here"
		if e.Field == "" {
			here = "at the top level"
		}
		fmt.Fprintf(&b, "; allowed %s: %s", here, strings.Join(e.Allowed, ", "))
	}
	return b.String()
}

// place names the object at path.
func place(path string) string {
	if path == "" {
		return "at the top level of the arguments"
	}
	return "inside " + path
}

// nested spells field inside the object at path as a JSON skeleton:
// {"request":{"question":…}}.
func nested(path, field string) string {
	var segs []string
	if path != "" {
		segs = strings.Split(path, ".")
	}
	segs = append(segs, field)
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("{" + strconv.Quote(workspace.Clip(s, 60)) + ":")
	}
	b.WriteString("…")
	b.WriteString(strings.Repeat("}", len(segs)))
	return b.String()
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
		// A number with no fraction is an integer to JSON Schema.
		return "a number with a fraction"
	case "":
		return "a value of another type"
	}
	return "a " + t
}

// quoteField spells a field name for a message, cut short.
func quoteField(k string) string {
	return strconv.Quote(workspace.Clip(k, 60))
}

func quoteFields(ks []string) string {
	q := make([]string, len(ks))
	for i, k := range ks {
		if k == "…" {
			q[i] = k
			continue
		}
		q[i] = quoteField(k)
	}
	return strings.Join(q, ", ")
}
