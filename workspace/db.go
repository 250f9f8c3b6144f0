package workspace

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is the workspace's SQLite database in WAL mode, opened as two pools:
// W, a single connection whose transactions begin IMMEDIATE (the one
// writer), and R, several read-only connections that never block it.
type DB struct {
	W *sql.DB
	R *sql.DB

	readers int
}

// Readers is the size of the read pool R.
func (db *DB) Readers() int { return db.readers }

// ReadCacheKiB is the page cache of each read connection. Every commit
// empties each reader's cache at its next read (SQLite resets its pager
// when the WAL changed), and the allocator under SQLite (one for the
// process) keeps only the newest 4 MiB of its emptied 64 KiB regions
// committed, shared by all its small blocks, and hands older ones back to
// the kernel (madvise): the pages of four 2 MiB caches (SQLite's default,
// each page in an 8 KiB block), freed together, were handed back and
// faulted in again, about 6 % of the owner's CPU during a sync
// under load. Four readers of 512 KiB (about 4.5 MiB of blocks) stay
// about within it; the pool has more readers on more than two cores
// (2 × GOMAXPROCS), and then more to hand back, beside more CPU to do it
// (bench/README.md, "A smaller page cache for the readers").
const ReadCacheKiB = 512

// BusyTimeout is how long a connection waits on a lock before SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(BusyTimeout/time.Millisecond))+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// Searches read the index through each connection's page cache,
		// not a memory map: SQLite keeps no mapped page in that cache,
		// so every page a search reads through a map is parsed again,
		// and each connection faults its own map in. Now that a search
		// reads a few rows by key (the postings are in memory), the
		// cache costs less CPU under concurrent searches (docs/search.md,
		// "Performance notes").
		q.Add("_pragma", "cache_size("+strconv.Itoa(-ReadCacheKiB)+")")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// A large sync grows the WAL; after each checkpoint it is cut back
		// to 64 MiB at most instead of keeping its largest size forever.
		q.Add("_pragma", "journal_size_limit(67108864)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// OpenDB opens (creating if needed) the database at path, switches it to
// WAL and applies pending migrations. Only the owner, holding the lock, may
// call it.
func OpenDB(ctx context.Context, path string) (*DB, error) {
	// The index holds the user's content and token hashes: create it 0600
	// (SQLite gives -wal and -shm the same mode).
	if f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	wc, err := newConnector(dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	w := sql.OpenDB(wc)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		w.Close()
		return nil, fmt.Errorf("open index: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		w.Close()
		return nil, fmt.Errorf("open index: journal mode is %q, want wal", mode)
	}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	rc, err := newConnector(dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open index: %w", err)
	}
	r := sql.OpenDB(rc)
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return &DB{W: w, R: r, readers: n}, nil
}

// Close checkpoints the WAL into the main file and closes both pools.
func (db *DB) Close() error {
	if db == nil {
		return nil
	}
	errR := db.R.Close()
	_, _ = db.W.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	errW := db.W.Close()
	if errW != nil {
		return errW
	}
	return errR
}

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok {
			continue
		}
		num, name, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: want NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %q: bad version", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := range ms {
		if ms[i].version != i+1 {
			return nil, fmt.Errorf("migrations: version %d missing", i+1)
		}
	}
	return ms, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > len(ms) {
		return Errorf(CodeUnavailable, "the index has schema version %d, newer than this tychora (%d): upgrade tychora", current, len(ms))
	}
	for _, m := range ms[current:] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate %d: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES(?, ?, ?)`,
			m.version, m.name, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %d: %w", m.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %d: %w", m.version, err)
		}
	}
	return nil
}
