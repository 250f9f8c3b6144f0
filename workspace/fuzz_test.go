package workspace

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzSettings: any tychora.json loads or fails with a typed error that
// names the file, and what loads is one JSON object of known keys, spelled
// exactly, always listens on loopback, and leaves out .git and directory
// names only (one path element each, no glob, listed once).
func FuzzSettings(f *testing.F) {
	for _, s := range []string{`{}`, `{"listen":"[::1]:0"}`, `{"workers":3,"collections":["a"]}`, `{"ingest_roots":["x"]}`, `[]`, `{"listen":"127.0.0.1:99999"}`,
		`null`, `{"workers":2} x`, `{"workers":2}{"workers":3}`, `{"WORKERS":3,"Query_History":"full"}`, `{"workers":1,"workers":2}`,
		`{"workers":null}`, `{"work\u0065rs":3}`, "{}\n\t ", `{"workers":2`, "",
		`{"default_excludes":[]}`, `{"default_excludes":["node_modules","target"]}`, `{"default_excludes":["a/b"]}`,
		`{"default_excludes":["*.egg-info"]}`, `{"default_excludes":[".git",".git"]}`, `{"default_excludes":[".."]}`} {
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
			if !strings.HasPrefix(ErrorMessage(err), l.Settings+": ") {
				t.Fatalf("message %q does not name the file", ErrorMessage(err))
			}
			return
		}
		var m map[string]json.RawMessage
		if !json.Valid([]byte(body)) || json.Unmarshal([]byte(body), &m) != nil || m == nil {
			t.Fatalf("loaded %q, which is not one JSON object", body)
		}
		for k := range m {
			if _, ok := settingsKeys[k]; !ok {
				t.Fatalf("loaded %q, with the unknown key %q", body, k)
			}
		}
		if !strings.HasPrefix(s.Listen, "127.0.0.1:") && !strings.HasPrefix(s.Listen, "[::1]:") {
			t.Fatalf("listen %q", s.Listen)
		}
		if !slices.Contains(s.DefaultExcludes, GitDir) || !slices.IsSorted(s.DefaultExcludes) || len(slices.Compact(slices.Clone(s.DefaultExcludes))) != len(s.DefaultExcludes) {
			t.Fatalf("default_excludes %q", s.DefaultExcludes)
		}
		for _, n := range s.DefaultExcludes {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\\\x00*?[{") {
				t.Fatalf("default_excludes holds %q", n)
			}
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

// FuzzCursor: an arbitrary string never opens as a cursor unless it was
// sealed for the same kind and scope, and never panics.
func FuzzCursor(f *testing.F) {
	c := NewCursorsWithKey([]byte("0123456789abcdef0123456789abcdef"))
	good, _ := c.Seal("jobs", "read:*", map[string]int{"after": 7})
	f.Add(good, "jobs", "read:*")
	f.Add(good, "jobs", "read:a")
	f.Add("", "jobs", "")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x", "y")
	f.Fuzz(func(t *testing.T, cur, kind, scope string) {
		var v map[string]int
		err := c.Open(kind, scope, cur, &v)
		if err != nil {
			if ErrorCode(err) != CodeInvalidArgument {
				t.Fatalf("code %s", ErrorCode(err))
			}
			return
		}
		// Only the sealed cursor under its own kind and scope opens.
		if cur != good || kind != "jobs" || scope != "read:*" || v["after"] != 7 {
			t.Fatalf("opened %q under %q/%q: %v", cur, kind, scope, v)
		}
	})
}

func FuzzNumberCursor(f *testing.F) {
	c := NewCursorsWithKey([]byte("0123456789abcdef0123456789abcdef"))
	good, err := c.SealNumber("search", "read:*|q", 40)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "search", "read:*|q")
	f.Add(good, "search", "read:a|q")
	f.Add(good[:len(good)-1]+"0", "search", "read:*|q")
	f.Add("", "search", "")
	f.Add(strings.Repeat("0", len(good)), "search", "read:*|q")
	f.Add(" "+good[1:], "search", "read:*|q")
	f.Fuzz(func(t *testing.T, cur, kind, scope string) {
		n, err := c.OpenNumber(kind, scope, cur)
		if err != nil {
			if ErrorCode(err) != CodeInvalidArgument {
				t.Fatalf("code %s", ErrorCode(err))
			}
			return
		}
		// Only the sealed cursor under its own kind and scope opens.
		if cur != good || kind != "search" || scope != "read:*|q" || n != 40 {
			t.Fatalf("opened %q under %q/%q: %d", cur, kind, scope, n)
		}
	})
}

// FuzzParseKeptTokens: whatever mcp-tokens.json holds, an accepted file
// holds only well-formed secrets with ids, and what SaveKeptToken writes
// parses back to the same.
func FuzzParseKeptTokens(f *testing.F) {
	f.Add([]byte(`{"version":1,"tokens":{"mcp-cursor":{"id":"tok_1","secret":"tyc_` + strings.Repeat("a", 64) + `"}}}`))
	f.Add([]byte(`{"version":1,"tokens":{}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		kept, err := ParseKeptTokens(b)
		if err != nil {
			return
		}
		for name, k := range kept {
			if !WellFormedSecret(k.Secret) || k.ID == "" {
				t.Fatalf("%q: kept %+v", name, k)
			}
		}
		l := NewLayout(t.TempDir())
		for name, k := range kept {
			if err := SaveKeptToken(l, name, k); err != nil {
				t.Fatal(err)
			}
		}
		again, err := LoadKeptTokens(l)
		if err != nil || len(again) != len(kept) {
			t.Fatalf("round trip: %v, %d of %d", err, len(again), len(kept))
		}
		for name, k := range kept {
			if again[name] != k {
				t.Fatalf("%q: %+v became %+v", name, k, again[name])
			}
		}
	})
}
