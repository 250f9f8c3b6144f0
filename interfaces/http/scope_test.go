package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

func TestParseScope(t *testing.T) {
	good := []struct {
		in string
		g  workspace.Grant
		cs []string
	}{
		{"grant=read", workspace.GrantRead, nil},
		{"grant=write; collections=b,a,a", workspace.GrantWrite, []string{"a", "b"}},
		{" collections = a ; ", "", []string{"a"}},
	}
	for _, tc := range good {
		g, cs, err := ParseScope(tc.in)
		if err != nil || g != tc.g || !reflect.DeepEqual(cs, tc.cs) {
			t.Errorf("ParseScope(%q) = %q %v %v", tc.in, g, cs, err)
		}
	}
	for _, in := range []string{"", ";", "grant", "grant=", "grant=root", "grant=read;grant=read", "colour=red", "collections=A", "collections=a,,b", strings.Repeat("a", 5000)} {
		if _, _, err := ParseScope(in); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("ParseScope(%q): %v", in, err)
		}
	}
}

// TestFormatScopeParses: what FormatScope writes, ParseScope reads back as
// the same grant and collections; a principal of no collections is
// refused.
func TestFormatScopeParses(t *testing.T) {
	for _, p := range []workspace.Principal{
		{Grant: workspace.GrantRead},
		{Grant: workspace.GrantWrite, Collections: []string{"a"}},
		{Grant: workspace.GrantManage, Collections: []string{"a", "b-c", "d_e"}},
	} {
		v := FormatScope(p)
		g, cs, err := ParseScope(v)
		if err != nil || g != p.Grant || !reflect.DeepEqual(cs, p.Collections) {
			t.Errorf("FormatScope(%+v) = %q, which parses as %q %v %v", p, v, g, cs, err)
		}
	}
	if _, _, err := ParseScope(FormatScope(workspace.Principal{Grant: workspace.GrantRead, Collections: []string{}})); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
		t.Errorf("a scope of no collections: %v", err)
	}
}

// FuzzParseScope: any header value parses or fails with INVALID_ARGUMENT,
// never panics, and what parses only names valid collections.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"grant=read", "grant=write; collections=a,b", "collections=", ";;", "grant=read;grant=write", "\x00", "collections=a,b,c;grant=manage"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, cs, err := ParseScope(s)
		if err != nil {
			if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
				t.Fatalf("code %s", workspace.ErrorCode(err))
			}
			return
		}
		if g != "" && !g.Valid() {
			t.Fatalf("grant %q", g)
		}
		for _, c := range cs {
			if !workspace.ValidCollectionName(c) {
				t.Fatalf("collection %q", c)
			}
		}
	})
}
