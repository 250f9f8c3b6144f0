package workspace

import (
	"context"
	"database/sql/driver"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// Giving way inside one statement.
//
// A statement that indexes many rows (INSERT … SELECT into an FTS5
// table) gives way to the searches between rows through the SQL function
// tychora_yield(key): true for every row, and every so many rows it calls
// the yield function registered under key (SQLYield). One statement, not
// many slices of it: FTS5 writes its pending terms out at each statement
// that changes it, and slices of 128 rows cost a sixth more work and left
// more segments (docs/architecture.md, "Searches before background
// work").

// sqlYield is a registered yield function and its row count.
type sqlYield struct {
	ctx   context.Context
	every int64
	fn    func(context.Context) error
	n     atomic.Int64
	mu    sync.Mutex
	err   error // fn's first error
}

var (
	sqlYields   sync.Map // int64 → *sqlYield
	sqlYieldKey atomic.Int64
)

func init() {
	sqlite.MustRegisterScalarFunction("tychora_yield", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		key, _ := args[0].(int64)
		v, ok := sqlYields.Load(key)
		if !ok {
			return int64(1), nil
		}
		y := v.(*sqlYield)
		if y.n.Add(1)%y.every == 0 {
			if err := y.fn(y.ctx); err != nil {
				y.mu.Lock()
				if y.err == nil {
					y.err = err
				}
				y.mu.Unlock()
				return nil, err
			}
		}
		return int64(1), nil
	})
}

// SQLYield registers fn (with ctx) to be called every `every` rows a
// statement passes through tychora_yield(key), and returns key and the
// function that unregisters it (it may be called more than once) and
// returns fn's first error: an error of fn fails the statement, whose
// own error says only that a function failed. A nil fn makes a key that
// never yields.
func SQLYield(ctx context.Context, every int, fn func(context.Context) error) (key int64, done func() error) {
	key = sqlYieldKey.Add(1)
	if fn == nil {
		return key, func() error { return nil }
	}
	y := &sqlYield{ctx: ctx, every: int64(max(1, every)), fn: fn}
	sqlYields.Store(key, y)
	return key, func() error {
		sqlYields.Delete(key)
		y.mu.Lock()
		defer y.mu.Unlock()
		return y.err
	}
}
