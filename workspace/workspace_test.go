package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResolveDir(t *testing.T) {
	cases := []struct{ flag, env, cwd, want string }{
		{"/a/ws", "/b/ws", "/c", "/a/ws"},
		{"", "/b/ws", "/c", "/b/ws"},
		{"", "", "/c", "/c/.tychora"},
		{"rel", "", "/c", "/c/rel"},
		{"", "rel/../x", "/c", "/c/x"},
	}
	for _, tc := range cases {
		got, err := ResolveDir(tc.flag, tc.env, tc.cwd)
		if err != nil || got != tc.want {
			t.Errorf("ResolveDir(%q,%q,%q) = %q, %v; want %q", tc.flag, tc.env, tc.cwd, got, err, tc.want)
		}
	}
}

func TestSettingsDefaultsAndValidation(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".tychora")
	s := DefaultSettings(dir)
	if err := s.Validate(dir); err != nil {
		t.Fatal(err)
	}
	want := Settings{IngestRoots: []string{root}, Collections: []string{"default"}, MaxFileBytes: 8 << 20,
		MaxRequestBytes: 4 << 20, Workers: 2, TokenCounter: "o200k_base", DefaultMaxTokens: 4000,
		QueryHistory: "metadata", Listen: "127.0.0.1:0", impliedRoot: true}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("defaults %+v\nwant %+v", s, want)
	}
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	if err := SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(l.Settings)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ingest_roots", "collections", "max_file_bytes", "max_request_bytes", "workers", "token_counter", "default_max_tokens", "query_history", "listen"} {
		if _, ok := m[k]; !ok {
			t.Errorf("tychora.json lacks %q", k)
		}
	}
	if len(m) != 9 {
		t.Errorf("tychora.json has %d keys: %s", len(m), b)
	}

	bad := []string{
		`{"workers":0.5}`, `{"workers":-1}`, `{"listen":"0.0.0.0:1"}`, `{"listen":"localhost:1"}`,
		`{"token_counter":"gpt2"}`, `{"query_history":"all"}`, `{"collections":["A"]}`,
		`{"collections":["a","a"]}`, `{"ingest_roots":["/"]}`, `{"unknown_key":1}`, `{"max_request_bytes":10}`,
		`{"ingest_roots":["` + dir + `"]}`, `{"ingest_roots":["` + dir + `/sub"]}`, `not json`,
	}
	for _, body := range bad {
		if err := os.WriteFile(l.Settings, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSettings(l); ErrorCode(err) != CodeInvalidArgument {
			t.Errorf("settings %s: %v", body, err)
		}
	}
	os.WriteFile(l.Settings, []byte(`{"workers":4,"ingest_roots":["sub"]}`), 0o644)
	got, err := LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workers != 4 || got.IngestRoots[0] != filepath.Join(root, "sub") || got.Listen != DefaultListen {
		t.Errorf("partial settings: %+v", got)
	}
}

func TestHomeNeverImpliedRoot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".tychora")
	s := DefaultSettings(dir)
	if err := s.Validate(dir); ErrorCode(err) != CodeInvalidArgument {
		t.Fatalf("home as implied root: %v", err)
	}
	s = Settings{IngestRoots: []string{home}}
	s.Fill(dir)
	if err := s.Validate(dir); err != nil {
		t.Fatalf("home named explicitly: %v", err)
	}
}

func TestParseScope(t *testing.T) {
	good := []struct {
		in string
		g  Grant
		cs []string
	}{
		{"grant=read", GrantRead, nil},
		{"grant=write; collections=b,a,a", GrantWrite, []string{"a", "b"}},
		{" collections = a ; ", "", []string{"a"}},
	}
	for _, tc := range good {
		g, cs, err := ParseScope(tc.in)
		if err != nil || g != tc.g || !reflect.DeepEqual(cs, tc.cs) {
			t.Errorf("ParseScope(%q) = %q %v %v", tc.in, g, cs, err)
		}
	}
	for _, in := range []string{"", ";", "grant", "grant=", "grant=root", "grant=read;grant=read", "colour=red", "collections=A", "collections=a,,b", strings.Repeat("a", 5000)} {
		if _, _, err := ParseScope(in); ErrorCode(err) != CodeInvalidArgument {
			t.Errorf("ParseScope(%q): %v", in, err)
		}
	}
}

func TestPrincipalNarrowAndCollections(t *testing.T) {
	p := Principal{Grant: GrantWrite, Collections: []string{"a", "b"}}
	if _, err := p.Narrow(GrantManage, nil); ErrorCode(err) != CodePermissionDenied {
		t.Error("narrow up in grant")
	}
	if _, err := p.Narrow("", []string{"c"}); ErrorCode(err) != CodePermissionDenied {
		t.Error("narrow to a foreign collection")
	}
	n, err := p.Narrow(GrantRead, []string{"a"})
	if err != nil || n.Grant != GrantRead || !reflect.DeepEqual(n.Collections, []string{"a"}) {
		t.Errorf("narrow: %+v %v", n, err)
	}
	if _, err := p.ResolveCollection(""); ErrorCode(err) != CodeInvalidArgument {
		t.Error("no default in grant")
	}
	if _, err := p.ResolveCollection("c"); ErrorCode(err) != CodePermissionDenied {
		t.Error("collection outside grant")
	}
	all := Principal{Grant: GrantRead}
	if c, err := all.ResolveCollection(""); err != nil || c != DefaultCollection {
		t.Errorf("default: %q %v", c, err)
	}
	if !GrantManage.Includes(GrantRead) || GrantRead.Includes(GrantWrite) || Grant("x").Includes(GrantRead) {
		t.Error("grant ladder")
	}
}

func TestTokensStore(t *testing.T) {
	ctx := context.Background()
	db, err := OpenDB(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	toks, owner, err := NewTokens(db)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toks.Authenticate(ctx, owner)
	if err != nil || p.Grant != GrantManage || !p.AllCollections() {
		t.Fatalf("owner: %+v %v", p, err)
	}
	rec, secret, err := toks.CreateToken(ctx, "n", GrantRead, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	p, err = toks.Authenticate(ctx, secret)
	if err != nil || p.Grant != GrantRead || !reflect.DeepEqual(p.Collections, []string{"a"}) || p.ID != "token:"+rec.ID {
		t.Fatalf("stored: %+v %v", p, err)
	}
	// The secret itself is nowhere in the database.
	var n int
	db.R.QueryRow(`SELECT count(*) FROM tokens WHERE instr(CAST(secret_hash AS TEXT), ?) > 0 OR instr(name, ?) > 0`, secret, secret).Scan(&n)
	if n != 0 {
		t.Fatal("secret stored in clear")
	}
	for _, s := range []string{"", "tyc_", secret[:len(secret)-1], secret + "0", strings.ToUpper(secret), "tyc_" + strings.Repeat("g", 64)} {
		if _, err := toks.Authenticate(ctx, s); ErrorCode(err) != CodeUnauthenticated {
			t.Errorf("Authenticate(%q): %v", s, err)
		}
	}
	// A second store (a restart) has a new owner secret; the old one fails.
	toks2, owner2, _ := NewTokens(db)
	if owner2 == owner {
		t.Fatal("owner token reused")
	}
	if _, err := toks2.Authenticate(ctx, owner); ErrorCode(err) != CodeUnauthenticated {
		t.Fatal("previous owner token still valid")
	}
	if _, err := toks2.Authenticate(ctx, secret); err != nil {
		t.Fatal("stored token lost across restart")
	}
}

func TestMigrationsOnceAndRecorded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	for i := 0; i < 2; i++ {
		db, err := OpenDB(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var n, maxV int
		db.R.QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &maxV)
		if n != SchemaVersion() || maxV != SchemaVersion() {
			t.Fatalf("open %d: %d migrations recorded, max %d, want %d", i, n, maxV, SchemaVersion())
		}
		var mode string
		db.R.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
		if mode != "wal" {
			t.Fatalf("journal mode %q", mode)
		}
		if _, err := db.R.Exec(`INSERT INTO meta(key, value) VALUES('x','y')`); err == nil {
			t.Fatal("read pool accepted a write")
		}
		var mmap int64
		if err := db.R.QueryRow(`PRAGMA mmap_size`).Scan(&mmap); err != nil || mmap != ReadMmapBytes {
			t.Fatalf("read pool mmap_size %d (%v), want %d", mmap, err, ReadMmapBytes)
		}
		db.Close()
	}
	// A database from a newer tychora is refused, not downgraded.
	db, _ := OpenDB(ctx, path)
	db.W.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES(999, 'future', 'now')`)
	db.Close()
	if _, err := OpenDB(ctx, path); ErrorCode(err) != CodeUnavailable {
		t.Fatalf("newer schema: %v", err)
	}
}

func TestErrorsSanitized(t *testing.T) {
	err := Wrap(CodeInternal, os.ErrPermission, "internal error")
	if p := Public(err); p.Err != nil || p.Message != "internal error" {
		t.Errorf("Public kept the cause: %+v", p)
	}
	if p := Public(os.ErrNotExist); p.Code != CodeInternal || strings.Contains(p.Message, "exist") {
		t.Errorf("Public(plain error) = %+v", p)
	}
	for _, c := range Codes() {
		if HTTPStatus(c) < 400 || !c.Valid() {
			t.Errorf("code %s status %d", c, HTTPStatus(c))
		}
	}
}

func TestLock(t *testing.T) {
	l := NewLayout(filepath.Join(t.TempDir(), "ws"))
	a, err := AcquireLock(l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(l); err != ErrLocked {
		t.Fatalf("second lock: %v", err)
	}
	a.Release()
	b, err := AcquireLock(l)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
}
