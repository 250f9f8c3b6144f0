package workspace

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Cursors seals and opens page cursors. A cursor is opaque to callers: a
// base64url payload with an HMAC over the cursor's kind, the scope that
// issued it and the payload, keyed by a per-workspace secret. A cursor
// used under another scope, for another listing, or altered in any way is
// INVALID_ARGUMENT.
type Cursors struct {
	key []byte
}

// maxCursorLen bounds what Open will look at.
const maxCursorLen = 4096

// NewCursors loads (or creates) the workspace's cursor key.
func NewCursors(ctx context.Context, db *DB) (*Cursors, error) {
	var hexKey string
	err := db.W.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'cursor_key'`).Scan(&hexKey)
	if errors.Is(err, sql.ErrNoRows) {
		var k [32]byte
		if _, err := rand.Read(k[:]); err != nil {
			return nil, err
		}
		hexKey = hex.EncodeToString(k[:])
		if _, err := db.W.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('cursor_key', ?)`, hexKey); err != nil {
			return nil, fmt.Errorf("cursor key: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	key, err := hex.DecodeString(hexKey)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("cursor key: corrupt")
	}
	return &Cursors{key: key}, nil
}

// NewCursorsWithKey returns Cursors with a given key (tests, tools).
func NewCursorsWithKey(key []byte) *Cursors { return &Cursors{key: slices.Clone(key)} }

func (c *Cursors) mac(kind, scope string, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:16]
}

// Seal returns the cursor for payload (any JSON-encodable value) issued for
// kind (the listing) under scope (who asked, and with which filters).
func (c *Cursors) Seal(kind, scope string, payload any) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	sum := c.mac(kind, scope, b)
	return base64.RawURLEncoding.EncodeToString(append(sum, b...)), nil
}

// Open verifies cursor for kind and scope and decodes its payload into v.
func (c *Cursors) Open(kind, scope, cursor string, v any) error {
	bad := Errorf(CodeInvalidArgument, "invalid cursor: pass next_cursor from the previous page of the same request")
	// The decoder skips "\r" and "\n" in every mode: refused here, so that
	// one cursor has one spelling.
	if len(cursor) > maxCursorLen || strings.ContainsAny(cursor, "\r\n") {
		return bad
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) <= 16 {
		return bad
	}
	sum, payload := raw[:16], raw[16:]
	if !hmac.Equal(sum, c.mac(kind, scope, payload)) {
		return bad
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return bad
	}
	return nil
}

// Number cursors. A page cursor whose payload is one small number (a
// rank) can be spelled in decimal digits only: numberDigits for the number
// and 39 for the 128-bit MAC, zero-padded, so every such cursor has the
// same length. Each group of three digits is one token in every counter
// tychora offers, so such a cursor costs the same tokens whatever its
// number and MAC: an answer's size then does not move with the cursor it
// carries (budgets are counted on the exact bytes, DESIGN §6).
const (
	numberDigits = 6
	macDigits    = 39
	// MaxCursorNumber is the largest number a number cursor holds.
	MaxCursorNumber = 999_999
)

// SealNumber returns the number cursor for n (0 to MaxCursorNumber)
// issued for kind under scope.
func (c *Cursors) SealNumber(kind, scope string, n int) (string, error) {
	if n < 0 || n > MaxCursorNumber {
		return "", fmt.Errorf("cursor number %d out of range", n)
	}
	digits := fmt.Sprintf("%0*d", numberDigits, n)
	sum := c.mac(kind, scope, []byte("n:"+digits))
	return digits + fmt.Sprintf("%0*s", macDigits, new(big.Int).SetBytes(sum).String()), nil
}

// OpenNumber verifies a number cursor for kind and scope and returns its
// number; anything else is INVALID_ARGUMENT.
func (c *Cursors) OpenNumber(kind, scope, cursor string) (int, error) {
	bad := Errorf(CodeInvalidArgument, "invalid cursor: pass next_cursor from the previous page of the same request")
	if len(cursor) != numberDigits+macDigits {
		return 0, bad
	}
	for i := 0; i < len(cursor); i++ {
		if cursor[i] < '0' || cursor[i] > '9' {
			return 0, bad
		}
	}
	digits := cursor[:numberDigits]
	want := fmt.Sprintf("%0*s", macDigits, new(big.Int).SetBytes(c.mac(kind, scope, []byte("n:"+digits))).String())
	if !hmac.Equal([]byte(cursor[numberDigits:]), []byte(want)) {
		return 0, bad
	}
	n := 0
	for i := 0; i < numberDigits; i++ {
		n = n*10 + int(digits[i]-'0')
	}
	return n, nil
}

// ScopeKey describes a principal's reach for binding cursors: its grant
// and its collections.
func ScopeKey(p Principal) string {
	if p.Collections == nil {
		return string(p.Grant) + ":*"
	}
	cs := slices.Clone(p.Collections)
	slices.Sort(cs)
	return string(p.Grant) + ":" + strings.Join(cs, ",")
}
