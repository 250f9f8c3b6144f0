package workspace

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestQPSGEnabled: every connection of both pools plans without bound
// values.
func TestQPSGEnabled(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	for name, pool := range map[string]*sql.DB{"write": db.W, "read": db.R} {
		// Two connections at once from the read pool: each is set up.
		var conns []*sql.Conn
		for range 2 {
			c, err := pool.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			if name == "write" {
				break
			}
		}
		for _, c := range conns {
			err := c.Raw(func(dc any) error {
				got, err := dbConfig(dc.(driver.Conn), sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, -1)
				if err == nil && got != 1 {
					t.Errorf("%s pool: QPSG is %d, want 1", name, got)
				}
				return err
			})
			if err != nil {
				t.Fatalf("%s pool: %v", name, err)
			}
			c.Close()
		}
	}
}

// TestQPSGStopsReprepares runs a statement of the shape FTS5 looks terms
// up with, alternating its integer parameter between 1 and 2 as a lookup
// over several segments does: without the guarantee SQLite prepares it
// again at each change (the hazard), with it never.
func TestQPSGStopsReprepares(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	if _, err := db.W.ExecContext(ctx, `CREATE TABLE seg_idx(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
		INSERT INTO seg_idx VALUES (1, x'61', 2), (2, x'61', 4), (1, x'6d', 6), (2, x'6d', 8)`); err != nil {
		t.Fatal(err)
	}
	c, err := db.R.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		conn := dc.(driver.Conn)
		for _, on := range []int32{0, 1} {
			if _, err := dbConfig(conn, sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, on); err != nil {
				return err
			}
			n, err := reprepares(conn, `SELECT pgno FROM seg_idx WHERE segid=? AND term<=? ORDER BY term DESC LIMIT 1`, 20)
			if err != nil {
				return err
			}
			switch {
			case on == 0 && n == 0:
				t.Errorf("without the guarantee: no reprepare in 20 lookups (the hazard this guards against is gone?)")
			case on == 1 && n != 0:
				t.Errorf("with the guarantee: %d reprepares in 20 lookups, want 0", n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reprepares prepares query on conn, runs it n times with segid 1, 2, 1, …
// and a term, and returns how often SQLite prepared it again.
func reprepares(conn driver.Conn, query string, n int) (int32, error) {
	h, tls, err := handleOf(conn)
	if err != nil {
		return 0, err
	}
	zSQL, err := libc.CString(query)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(tls, zSQL)
	pp := libc.Xmalloc(tls, 8)
	defer libc.Xfree(tls, pp)
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, h, zSQL, -1, pp, 0); rc != sqlite3.SQLITE_OK {
		return 0, errors.New("prepare: " + libc.GoString(sqlite3.Xsqlite3_errmsg(tls, h)))
	}
	st := uintptr(binary.NativeEndian.Uint64(libc.GoBytes(pp, 8)))
	defer sqlite3.Xsqlite3_finalize(tls, st)
	term := libc.Xmalloc(tls, 1)
	defer libc.Xfree(tls, term)
	libc.Xmemset(tls, term, 'b', 1)
	for i := range n {
		sqlite3.Xsqlite3_bind_int(tls, st, 1, int32(1+i%2))
		sqlite3.Xsqlite3_bind_blob(tls, st, 2, term, 1, 0)
		if rc := sqlite3.Xsqlite3_step(tls, st); rc != sqlite3.SQLITE_ROW {
			return 0, errors.New("step: " + libc.GoString(sqlite3.Xsqlite3_errmsg(tls, h)))
		}
		sqlite3.Xsqlite3_reset(tls, st)
	}
	return sqlite3.Xsqlite3_stmt_status(tls, st, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0), nil
}

// TestHandleOfOtherConn: a connection that is not the driver's has no
// handle, and enabling fails without touching it.
func TestHandleOfOtherConn(t *testing.T) {
	if _, _, err := handleOf(otherConn{}); !errors.Is(err, errNoHandle) {
		t.Fatalf("handleOf(otherConn) = %v, want errNoHandle", err)
	}
	if err := enableQPSG(&otherConn{}); !errors.Is(err, errNoHandle) {
		t.Fatalf("enableQPSG(*otherConn) = %v, want errNoHandle", err)
	}
}

// otherConn is a connection of another driver.
type otherConn struct{}

func (otherConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("no") }
func (otherConn) Close() error                        { return nil }
func (otherConn) Begin() (driver.Tx, error)           { return nil, errors.New("no") }

// openTestDB opens a new index in a temporary directory, closed when the
// test ends.
func openTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := OpenDB(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
