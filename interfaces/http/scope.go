package httpapi

import (
	"sort"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// ScopeHeader is the HTTP header that narrows a request's grant. This file
// is its one home: FormatScope writes its value, ParseScope reads it.
const ScopeHeader = "X-Tychora-Scope"

// ParseScope parses an X-Tychora-Scope value: "grant=read;
// collections=a,b". Both keys are optional but at least one must be there;
// a repeated or unknown key, an empty value, or an invalid collection name
// is INVALID_ARGUMENT. The returned collections are sorted and unique, nil
// when the header names none.
func ParseScope(v string) (workspace.Grant, []string, error) {
	if len(v) > 4096 {
		return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s is too long", ScopeHeader)
	}
	var g workspace.Grant
	var cs []string
	seen := map[string]bool{}
	parts := strings.Split(v, ";")
	any := false
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || val == "" {
			return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: want key=value pairs separated by ';'", ScopeHeader)
		}
		if seen[k] {
			return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: %q given twice", ScopeHeader, k)
		}
		seen[k] = true
		any = true
		switch k {
		case "grant":
			pg, err := workspace.ParseGrant(val)
			if err != nil {
				return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: grant %q: use read, write or manage", ScopeHeader, val)
			}
			g = pg
		case "collections":
			set := map[string]bool{}
			for _, c := range strings.Split(val, ",") {
				c = strings.TrimSpace(c)
				if !workspace.ValidCollectionName(c) {
					return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: invalid collection name", ScopeHeader)
				}
				set[c] = true
			}
			cs = make([]string, 0, len(set))
			for c := range set {
				cs = append(cs, c)
			}
			sort.Strings(cs)
		default:
			return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s: unknown key %q (use grant and collections)", ScopeHeader, k)
		}
	}
	if !any {
		return "", nil, workspace.Errorf(workspace.CodeInvalidArgument, "%s is empty", ScopeHeader)
	}
	return g, cs, nil
}

// FormatScope writes p's grant and collections as an X-Tychora-Scope
// value, which ParseScope reads back. A principal limited to no
// collection at all is written with an empty collections value, which
// the owner refuses: it matches nothing.
func FormatScope(p workspace.Principal) string {
	s := "grant=" + string(p.Grant)
	if p.Collections != nil {
		s += "; collections=" + strings.Join(p.Collections, ",")
	}
	return s
}
