package workspace

import (
	"strings"
	"testing"
)

// FuzzParseScope: any header value parses or fails with INVALID_ARGUMENT,
// never panics, and what parses only names valid collections.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"grant=read", "grant=write; collections=a,b", "collections=", ";;", "grant=read;grant=write", "\x00", "collections=a,b,c;grant=manage"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, cs, err := ParseScope(s)
		if err != nil {
			if ErrorCode(err) != CodeInvalidArgument {
				t.Fatalf("code %s", ErrorCode(err))
			}
			return
		}
		if g != "" && !g.Valid() {
			t.Fatalf("grant %q", g)
		}
		for _, c := range cs {
			if !ValidCollectionName(c) {
				t.Fatalf("collection %q", c)
			}
		}
	})
}

// FuzzSettings: any tychora.json loads or fails with a typed error, and
// what loads always listens on loopback.
func FuzzSettings(f *testing.F) {
	for _, s := range []string{`{}`, `{"listen":"[::1]:0"}`, `{"workers":3,"collections":["a"]}`, `{"ingest_roots":["x"]}`, `[]`, `{"listen":"127.0.0.1:99999"}`} {
		f.Add(s)
	}
	dir := f.TempDir() + "/ws"
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if err := WriteFileAtomic(l.Settings, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSettings(l)
		if err != nil {
			if c := ErrorCode(err); c != CodeInvalidArgument {
				t.Fatalf("code %s: %v", c, err)
			}
			return
		}
		if !strings.HasPrefix(s.Listen, "127.0.0.1:") && !strings.HasPrefix(s.Listen, "[::1]:") {
			t.Fatalf("listen %q", s.Listen)
		}
	})
}

// FuzzSecret: only the exact secret shape is well formed.
func FuzzSecret(f *testing.F) {
	f.Add("tyc_" + strings.Repeat("a", 64))
	f.Add("tyc_")
	f.Fuzz(func(t *testing.T, s string) {
		if WellFormedSecret(s) && (len(s) != 68 || !strings.HasPrefix(s, TokenPrefix)) {
			t.Fatalf("%q accepted", s)
		}
	})
}
