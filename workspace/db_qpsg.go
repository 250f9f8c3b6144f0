package workspace

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The query planner stability guarantee on every connection.
//
// SQLite's planner may look at a bound value when it plans a statement,
// and then prepares the statement again whenever that value changes in a
// way that could change the plan. Since SQLite 3.50 one such case is an
// equality on an integer parameter that moves between 0 or 1 and another
// value. FTS5 looks each term of a query up in every segment of its index
// through one internal statement, `SELECT pgno FROM '…_idx' WHERE
// segid=? AND term<=? …`, and segment ids start at 1: over an index of
// several segments (any index after its first sync; FTS5 gives a new
// segment the smallest free id) every lookup moved segid between 1 and
// another id, and every one prepared the statement again. That was 12 %
// of a search's CPU over Go's tree (bench/README.md, "Segment lookups
// prepared again").
//
// With SQLITE_DBCONFIG_ENABLE_QPSG the planner plans without bound values
// and never prepares a statement again for them. Nothing here relies on
// value-dependent plans: there are no sqlite_stat4 tables, and no LIKE or
// GLOB takes a bound pattern.
//
// The driver has no call for sqlite3_db_config, so qpsgConnector reads the
// connection's handle from the driver's connection value (its fields db
// and tls). If a driver version moves them, enableQPSG fails and the
// connection is used as it is: slower over a multi-segment index, never
// wrong. TestQPSGEnabled fails then.

// qpsgConnector opens connections through base and turns the query
// planner stability guarantee on for each.
type qpsgConnector struct {
	driver.Connector
}

// errNoHandle: the driver's connection value does not hold its handle where
// enableQPSG looks.
var errNoHandle = errors.New("no sqlite3 handle in the driver's connection")

func (c qpsgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	_ = enableQPSG(conn)
	return conn, nil
}

// newConnector is the driver's connector for dsn with the guarantee on.
func newConnector(dsn string) (driver.Connector, error) {
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return qpsgConnector{base}, nil
}

// handleOf returns the sqlite3 handle and thread state of a connection the
// driver opened.
func handleOf(conn driver.Conn) (uintptr, *libc.TLS, error) {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, nil, errNoHandle
	}
	v = v.Elem()
	db, tls := v.FieldByName("db"), v.FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return 0, nil, errNoHandle
	}
	h := *(*uintptr)(unsafe.Pointer(db.UnsafeAddr()))
	t := *(**libc.TLS)(unsafe.Pointer(tls.UnsafeAddr()))
	if h == 0 || t == nil {
		return 0, nil, errNoHandle
	}
	return h, t, nil
}

// dbConfig calls sqlite3_db_config(op, on, &res) on conn and returns res:
// the setting after the call (on < 0 only reads it).
func dbConfig(conn driver.Conn, op int32, on int32) (int32, error) {
	h, tls, err := handleOf(conn)
	if err != nil {
		return 0, err
	}
	// The vararg list: an int (widened to 8 bytes) and an int*.
	buf := libc.Xmalloc(tls, 8*2+8)
	if buf == 0 {
		return 0, errors.New("sqlite3_db_config: out of memory")
	}
	defer libc.Xfree(tls, buf)
	res := buf + 16
	if rc := sqlite3.Xsqlite3_db_config(tls, h, op, libc.VaList(buf, on, res)); rc != sqlite3.SQLITE_OK {
		return 0, fmt.Errorf("sqlite3_db_config(%d): code %d", op, rc)
	}
	return int32(binary.NativeEndian.Uint32(libc.GoBytes(res, 4))), nil
}

// enableQPSG turns the query planner stability guarantee on for conn.
func enableQPSG(conn driver.Conn) error {
	got, err := dbConfig(conn, sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
	if err != nil {
		return err
	}
	if got != 1 {
		return fmt.Errorf("query planner stability guarantee: still %d", got)
	}
	return nil
}
