package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Human output for bodies that have no table of their own: each object an
// indented record, numbers as JSON wrote them (8388608, never 8.388608e+06).

// jsonValue is v as generic JSON whose numbers are json.Number.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// leadKeys come first in a record, in this order; the rest follow sorted.
var leadKeys = []string{"id", "name", "key", "path", "kind", "status", "state", "source", "revision"}

func recordKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(leadKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var lead []string
	for _, k := range leadKeys {
		if _, ok := m[k]; ok {
			lead = append(lead, k)
		}
	}
	return append(lead, keys...)
}

// maxListItems is how many values of a list of scalars a record shows.
const maxListItems = 12

// scalarText is a JSON scalar (or a list of them) as a person reads it;
// ok is false for an object or a list holding objects.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "-", true
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "yes", true
		}
		return "no", true
	case []any:
		if len(x) == 0 {
			return "(none)", true
		}
		parts := make([]string, 0, min(len(x), maxListItems))
		for i, it := range x {
			s, ok := scalarText(it)
			if !ok {
				return "", false
			}
			if i == maxListItems {
				parts = append(parts, fmt.Sprintf("… (%d more)", len(x)-maxListItems))
				break
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", "), true
	}
	return "", false
}

// writeRecord prints the object m, one key a line, indented by indent;
// nested objects and lists of objects are indented below their key.
func writeRecord(w io.Writer, indent string, m map[string]any) {
	for _, k := range recordKeys(m) {
		v := m[k]
		if s, ok := scalarText(v); ok {
			fmt.Fprintf(w, "%s%s: %s\n", indent, k, s)
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				fmt.Fprintf(w, "%s%s: (none)\n", indent, k)
				continue
			}
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			writeRecord(w, indent+"  ", x)
		case []any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			for _, it := range x {
				writeItem(w, indent+"  ", it)
			}
		}
	}
}

// writeItem prints one element of a list: "- " and its record.
func writeItem(w io.Writer, indent string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		s, _ := scalarText(v)
		fmt.Fprintf(w, "%s- %s\n", indent, s)
		return
	}
	var b strings.Builder
	writeRecord(&b, indent+"  ", m)
	out := b.String()
	if len(out) >= len(indent)+2 {
		out = indent + "- " + out[len(indent)+2:]
	}
	fmt.Fprint(w, out)
}

// writeRecords prints items as records separated by blank lines.
func writeRecords(w io.Writer, items []any) {
	for i, it := range items {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if m, ok := jsonValue(it).(map[string]any); ok {
			writeRecord(w, "", m)
		} else {
			s, _ := scalarText(jsonValue(it))
			fmt.Fprintln(w, s)
		}
	}
}

// writeTable prints items as a table of the named columns (JSON keys);
// headers are the keys in capitals.
func writeTable(w io.Writer, items []any, columns ...string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := make([]string, len(columns))
	for i, c := range columns {
		head[i] = strings.ToUpper(strings.ReplaceAll(c, "_", " "))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, it := range items {
		m, _ := jsonValue(it).(map[string]any)
		row := make([]string, len(columns))
		for i, c := range columns {
			s, ok := scalarText(m[c])
			if !ok {
				s = jsonString(m[c])
			}
			row[i] = s
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
