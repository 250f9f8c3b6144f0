package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	on := true
	want := Settings{IngestRoots: []string{root}, Collections: []string{"default"}, MaxFileBytes: 8 << 20,
		MaxRequestBytes: 4 << 20, Workers: 2, TokenCounter: "o200k_base", DefaultMaxTokens: 4000,
		QueryHistory: "metadata", Listen: "127.0.0.1:0", DefaultExcludes: DefaultExcludes(), Watch: &on, impliedRoot: true}
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
	for _, k := range []string{"ingest_roots", "collections", "max_file_bytes", "max_request_bytes", "workers", "token_counter", "default_max_tokens", "query_history", "listen", "watch"} {
		if _, ok := m[k]; !ok {
			t.Errorf("tychora.json lacks %q", k)
		}
	}
	if len(m) != 10 { // default_excludes is left out while it is the built-in list
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
	rec, secret, err := toks.CreateToken(ctx, "n", GrantRead, []string{"a"}, "")
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
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %d, %v", len(ms), err)
	}
	newest := ms[len(ms)-1].version
	for i := 0; i < 2; i++ {
		db, err := OpenDB(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var n, maxV int
		db.R.QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &maxV)
		if n != len(ms) || maxV != newest {
			t.Fatalf("open %d: %d migrations recorded, max %d, want %d, max %d", i, n, maxV, len(ms), newest)
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
		if err := db.R.QueryRow(`PRAGMA mmap_size`).Scan(&mmap); err != nil || mmap != 0 {
			t.Fatalf("read pool mmap_size %d (%v), want 0: searches read through the page cache", mmap, err)
		}
		var cache int64
		if err := db.R.QueryRow(`PRAGMA cache_size`).Scan(&cache); err != nil || cache != -ReadCacheKiB {
			t.Fatalf("read pool cache_size %d (%v), want %d", cache, err, -ReadCacheKiB)
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
		if !c.Valid() {
			t.Errorf("code %s is not valid", c)
		}
	}
	if Code("NOPE").Valid() {
		t.Error("an unknown code is valid")
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

// TestSettingsStrictDecoding: tychora.json is exactly one JSON object of
// known keys spelled exactly; anything looser is INVALID_ARGUMENT with a
// message naming the file and, where there is one, the key.
func TestSettingsStrictDecoding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".tychora")
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ body, key string }{
		{`{"workers":2} x`, ""},
		{`{"workers":2}{"workers":3}`, ""},
		{`{"workers":2} {}`, ""},
		{`{"workers":2}]`, ""},
		{`{"WORKERS":3,"Query_History":"full"}`, "WORKERS"},
		{`{"workers":3,"Query_History":"full"}`, "Query_History"},
		{`{"Workers":3}`, "Workers"},
		{`{"ingest_roots ":[]}`, "ingest_roots "},
		{`{"colour":"blue"}`, "colour"},
		{`null`, ""},
		{``, ""},
		{"  \n", ""},
		{`[{"workers":2}]`, ""},
		{`"workers"`, ""},
		{`{"workers":2`, ""},
		{`{"workers":1,"workers":2}`, "workers"},
		{`{"workers":null}`, "workers"},
		{`{"collections":null}`, "collections"},
		{`{"workers":"2"}`, "workers"},
		{`{"ingest_roots":"/x"}`, "ingest_roots"},
		{`{"max_file_bytes":1.5}`, "max_file_bytes"},
		{`{"watch":null}`, "watch"},
		{`{"watch":"yes"}`, "watch"},
		{`{"watch":1}`, "watch"},
	}
	for _, c := range bad {
		if err := os.WriteFile(l.Settings, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSettings(l)
		if ErrorCode(err) != CodeInvalidArgument {
			t.Errorf("settings %q: %v, want INVALID_ARGUMENT", c.body, err)
			continue
		}
		msg := ErrorMessage(err)
		if !strings.HasPrefix(msg, l.Settings+": ") {
			t.Errorf("settings %q: message %q does not name the file", c.body, msg)
		}
		if c.key != "" && !strings.Contains(msg, fmt.Sprintf("%q", c.key)) {
			t.Errorf("settings %q: message %q does not name the key %q", c.body, msg, c.key)
		}
	}
	good := []struct {
		body    string
		workers int
	}{
		{`{}`, DefaultWorkers},
		{"{\"workers\":3}\n\t \n", 3},
		{`{"work\u0065rs":4}`, 4}, // the key is "workers" once unescaped
		{`{"workers":0}`, DefaultWorkers},
	}
	for body, want := range map[string]bool{`{}`: true, `{"watch":true}`: true, `{"watch":false}`: false} {
		if err := os.WriteFile(l.Settings, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := LoadSettings(l); err != nil || s.Watching() != want {
			t.Errorf("settings %q: watching %v, %v; want %v", body, s.Watching(), err, want)
		}
	}
	for _, c := range good {
		if err := os.WriteFile(l.Settings, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSettings(l)
		if err != nil || s.Workers != c.workers {
			t.Errorf("settings %q: workers %d, %v; want %d", c.body, s.Workers, err, c.workers)
		}
	}
}

// TestSettingsKeysCoverFields: the decoder knows every field of Settings
// that SaveSettings writes, so what tychora init writes loads again.
func TestSettingsKeysCoverFields(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".tychora")
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings(dir)
	s.DefaultExcludes = []string{".git", "node_modules"} // written only when it is not the built-in list
	s.TapeRedact = []string{`secret-[0-9]+`}             // written only when set
	if err := SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	b, _ := os.ReadFile(l.Settings)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(settingsKeys) != len(m) {
		t.Errorf("decoder knows %d keys, SaveSettings writes %d", len(settingsKeys), len(m))
	}
	got, err := LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	s.impliedRoot = false
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: %+v\nwant %+v", got, s)
	}
}

// TestFileSystemRootNeverIngestRoot: "/" is refused as an ingest root
// however it is spelled, a symlink to it included, at init (Validate) and
// when a hand-edited tychora.json is loaded.
func TestFileSystemRootNeverIngestRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, ".tychora")
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(base, "rootlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rootlink", filepath.Join(base, "chain")); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"/", "rootlink", filepath.Join(base, "rootlink"), "chain", "rootlink/.", strings.Repeat("../", 40)} {
		s := Settings{IngestRoots: []string{r}}
		s.Fill(dir)
		if err := s.Validate(dir); ErrorCode(err) != CodeInvalidArgument || !strings.Contains(ErrorMessage(err), "file system root") {
			t.Errorf("Validate(ingest root %q): %v, want INVALID_ARGUMENT", r, err)
		}
		body, _ := json.Marshal(map[string][]string{"ingest_roots": {r}})
		if err := os.WriteFile(l.Settings, body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSettings(l)
		if ErrorCode(err) != CodeInvalidArgument || !strings.HasPrefix(ErrorMessage(err), l.Settings+": ") {
			t.Errorf("LoadSettings(ingest root %q): %v, want INVALID_ARGUMENT naming the file", r, err)
		}
	}
	// The implied root too: a workspace in a directory whose parent is /.
	s := Settings{}
	s.Fill(filepath.Join(base, "rootlink", "ws"))
	if err := s.Validate(filepath.Join(base, "rootlink", "ws")); ErrorCode(err) != CodeInvalidArgument {
		t.Errorf("implied root through a symlink to /: %v, want INVALID_ARGUMENT", err)
	}
}

// TestHomeNeverImpliedRootThroughSymlink: the home directory reached
// through a symlink, on either side, is not an implied root either; named
// explicitly it stays allowed.
func TestHomeNeverImpliedRootThroughSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "fakehome")
	link := filepath.Join(base, "homelink")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ home, parent string }{{home, link}, {link, home}, {link, link}} {
		t.Setenv("HOME", c.home)
		dir := filepath.Join(c.parent, ".tychora")
		s := DefaultSettings(dir)
		if err := s.Validate(dir); ErrorCode(err) != CodeInvalidArgument || !strings.Contains(ErrorMessage(err), "home directory") {
			t.Errorf("HOME=%s, workspace %s: %v, want INVALID_ARGUMENT", c.home, dir, err)
		}
		// A settings file without ingest_roots implies the root too.
		l := NewLayout(dir)
		if err := l.EnsureDirs(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.Settings, []byte(`{"workers":2}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSettings(l); ErrorCode(err) != CodeInvalidArgument {
			t.Errorf("HOME=%s, load %s: %v, want INVALID_ARGUMENT", c.home, l.Settings, err)
		}
		s = Settings{IngestRoots: []string{c.parent}}
		s.Fill(dir)
		if err := s.Validate(dir); err != nil {
			t.Errorf("HOME=%s, home named explicitly as %s: %v", c.home, c.parent, err)
		}
	}
}

// TestIngestRootInsideWorkspaceThroughSymlink: a root that is a symlink
// into the workspace is refused like the workspace itself.
func TestIngestRootInsideWorkspaceThroughSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, ".tychora")
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "assets"), filepath.Join(base, "wslink")); err != nil {
		t.Fatal(err)
	}
	s := Settings{IngestRoots: []string{"wslink"}}
	s.Fill(dir)
	if err := s.Validate(dir); ErrorCode(err) != CodeInvalidArgument {
		t.Errorf("root through a symlink into the workspace: %v, want INVALID_ARGUMENT", err)
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 64, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},            // never inside a UTF-8 sequence
		{"a\xffb", 64, "a\uFFFDb"}, // invalid bytes become U+FFFD
		{"", 0, ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestFindDir: --workspace, then $TYCHORA_WORKSPACE, then the nearest
// .tychora that holds a workspace in cwd or a parent, then ./.tychora; the
// search never enters a directory the user does not own.
func TestFindDir(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, "home", "u")
	deep := filepath.Join(top, "proj", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// proj/a/.tychora is a directory without settings: not a workspace.
	if err := os.MkdirAll(filepath.Join(top, "proj", "a", DefaultDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(top, "proj", DefaultDirName)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(NewLayout(ws).Settings, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	everyone := func(os.FileInfo) bool { return true }
	foreign := func(dir string) func(os.FileInfo) bool {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		return func(other os.FileInfo) bool { return !os.SameFile(fi, other) }
	}
	cases := []struct {
		name           string
		flag, env, cwd string
		owned          func(os.FileInfo) bool
		want           Found
	}{
		{"flag", "/a/ws", "/b/ws", deep, everyone, Found{Dir: "/a/ws", Origin: FromFlag}},
		{"env", "", "rel", deep, everyone, Found{Dir: filepath.Join(deep, "rel"), Origin: FromEnv}},
		{"parent", "", "", deep, everyone, Found{Dir: ws, Origin: FromSearch, SearchFrom: deep, SearchTo: filepath.Join(top, "proj")}},
		{"here", "", "", filepath.Join(top, "proj"), everyone, Found{Dir: ws, Origin: FromSearch, SearchFrom: filepath.Join(top, "proj"), SearchTo: filepath.Join(top, "proj")}},
		{"none", "", "", top, foreign(filepath.Join(root, "home")), Found{Dir: filepath.Join(top, DefaultDirName), Origin: FromDefault, SearchFrom: top, SearchTo: top}},
		{"foreign parent", "", "", deep, foreign(filepath.Join(top, "proj")), Found{Dir: filepath.Join(deep, DefaultDirName), Origin: FromDefault, SearchFrom: deep, SearchTo: filepath.Join(top, "proj", "a")}},
		{"foreign workspace", "", "", deep, foreign(ws), Found{Dir: filepath.Join(deep, DefaultDirName), Origin: FromDefault, SearchFrom: deep, SearchTo: "/"}},
		{"foreign cwd", "", "", deep, foreign(deep), Found{Dir: filepath.Join(deep, DefaultDirName), Origin: FromDefault, SearchFrom: deep}},
	}
	for _, tc := range cases {
		if got := findDir(tc.flag, tc.env, tc.cwd, tc.owned); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestTapeRedactSetting: tape_redact takes RE2 patterns that cannot match
// the empty string, and its refusals never quote a pattern.
func TestTapeRedactSetting(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".tychora")
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"tape_redact":["sk-[A-Za-z0-9]{20,}","hunter2"]}`, true},
		{`{"tape_redact":["(unclosed-secret"]}`, false},
		{`{"tape_redact":["x*"]}`, false},
		{`{"tape_redact":"sk-"}`, false},
	} {
		if err := os.WriteFile(l.Settings, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSettings(l)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.body, err)
		}
		if err != nil && strings.Contains(err.Error(), "unclosed-secret") {
			t.Errorf("%s: the refusal quotes the pattern: %v", c.body, err)
		}
	}
}

// An empty default_excludes (nothing left out but .git) stays empty
// through a save: an absent key would mean the built-in list.
func TestSaveSettingsKeepsEmptyExcludes(t *testing.T) {
	dir := t.TempDir()
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings(dir)
	s.DefaultExcludes = []string{}
	if err := SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.DefaultExcludes, []string{GitDir}) {
		t.Errorf("default_excludes after saving []: %q, want only %q", back.DefaultExcludes, GitDir)
	}
}
