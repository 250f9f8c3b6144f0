package workspace

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// TokenPrefix starts every tychora secret; a secret is the prefix and 64
// hex digits (256 random bits). Anything else is refused before any lookup.
const TokenPrefix = "tyc_"

const tokenHexLen = 64

// OwnerPrincipalID is the principal ID of the owner token.
const OwnerPrincipalID = "owner"

// TokenRecord is a stored token as listed (never its secret).
type TokenRecord struct {
	ID          string     `json:"id"`
	Name        *string    `json:"name"`
	Grant       Grant      `json:"grant"`
	Collections []string   `json:"collections"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
}

// NewSecret returns a fresh secret.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return TokenPrefix + hex.EncodeToString(b[:]), nil
}

// WellFormedSecret reports whether s has the shape of a tychora secret.
func WellFormedSecret(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != tokenHexLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func hashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// Tokens authenticates bearer secrets and manages stored tokens. Stored
// tokens keep only the SHA-256 of their secret; the owner token lives in
// memory only and is new at every start.
type Tokens struct {
	db        *DB
	ownerHash [32]byte

	mu       sync.Mutex
	lastSeen map[string]time.Time // throttles last_used_at writes

	issueMu sync.Mutex // serializes Issue (names are not unique)
}

// NewTokens returns the token store of db with a new owner secret, which it
// returns for endpoint.json.
func NewTokens(db *DB) (*Tokens, string, error) {
	secret, err := NewSecret()
	if err != nil {
		return nil, "", err
	}
	return &Tokens{db: db, ownerHash: hashSecret(secret), lastSeen: map[string]time.Time{}}, secret, nil
}

// Authenticate maps a bearer secret to its principal, or UNAUTHENTICATED.
// Comparisons of secret hashes are constant-time.
func (t *Tokens) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !WellFormedSecret(secret) {
		return Principal{}, Errorf(CodeUnauthenticated, "invalid bearer token")
	}
	h := hashSecret(secret)
	if subtle.ConstantTimeCompare(h[:], t.ownerHash[:]) == 1 {
		return Principal{ID: OwnerPrincipalID, Grant: GrantManage}, nil
	}
	var (
		id, grant, cols string
		stored          []byte
	)
	err := t.db.R.QueryRowContext(ctx,
		`SELECT id, grant_level, collections, secret_hash FROM tokens WHERE secret_hash = ?`, h[:]).
		Scan(&id, &grant, &cols, &stored)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && subtle.ConstantTimeCompare(stored, h[:]) != 1) {
		return Principal{}, Errorf(CodeUnauthenticated, "invalid bearer token")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p := Principal{ID: "token:" + id, Grant: Grant(grant)}
	if p.Collections, err = decodeCollections(cols); err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	t.touch(ctx, id)
	return p, nil
}

// touch records last use at most once a minute per token.
func (t *Tokens) touch(ctx context.Context, id string) {
	now := time.Now().UTC()
	t.mu.Lock()
	last, ok := t.lastSeen[id]
	if ok && now.Sub(last) < time.Minute {
		t.mu.Unlock()
		return
	}
	t.lastSeen[id] = now
	t.mu.Unlock()
	_, _ = t.db.W.ExecContext(context.WithoutCancel(ctx),
		`UPDATE tokens SET last_used_at = ? WHERE id = ?`, now.Format(time.RFC3339Nano), id)
}

func decodeCollections(s string) ([]string, error) {
	var cs []string
	if err := json.Unmarshal([]byte(s), &cs); err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, nil
	}
	return cs, nil
}

func encodeCollections(cs []string) string {
	if len(cs) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(cs)
	return string(b)
}

// CreateToken stores a token named name ("" for none) with grant g on
// collections cs (nil: all) and returns its record and the secret, which is
// never stored. With rotate, the id of a stored token, it rotates that
// token instead: same id, the new name, grant and collections, a new
// secret (NOT_FOUND when it is gone). Names are not unique: which token a
// name rotates is the caller's choice (see Issue).
func (t *Tokens) CreateToken(ctx context.Context, name string, g Grant, cs []string, rotate string) (TokenRecord, string, error) {
	secret, err := NewSecret()
	if err != nil {
		return TokenRecord{}, "", err
	}
	h := hashSecret(secret)
	now := time.Now().UTC()
	var namePtr *string
	if name != "" {
		namePtr = &name
	}
	if len(cs) == 0 {
		cs = nil
	}
	rec := TokenRecord{Name: namePtr, Grant: g, Collections: cs, CreatedAt: now}
	if rotate != "" {
		rec.ID = rotate
		res, err := t.db.W.ExecContext(ctx, `UPDATE tokens SET name = ?, grant_level = ?, collections = ?, secret_hash = ?, created_at = ?, last_used_at = NULL WHERE id = ?`,
			namePtr, string(g), encodeCollections(cs), h[:], now.Format(time.RFC3339Nano), rotate)
		if err != nil {
			return TokenRecord{}, "", fmt.Errorf("create token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return TokenRecord{}, "", Errorf(CodeNotFound, "no token with that id")
		}
	} else {
		rec.ID = uuid.NewString()
		if _, err := t.db.W.ExecContext(ctx, `INSERT INTO tokens(id, name, grant_level, collections, secret_hash, created_at) VALUES(?, ?, ?, ?, ?, ?)`,
			rec.ID, namePtr, string(g), encodeCollections(cs), h[:], now.Format(time.RFC3339Nano)); err != nil {
			return TokenRecord{}, "", fmt.Errorf("create token: %w", err)
		}
	}
	t.mu.Lock()
	delete(t.lastSeen, rec.ID)
	t.mu.Unlock()
	return rec, secret, nil
}

// ListTokens returns every stored token, oldest first.
func (t *Tokens) ListTokens(ctx context.Context) ([]TokenRecord, error) {
	rows, err := t.db.R.QueryContext(ctx, `SELECT id, name, grant_level, collections, created_at, last_used_at FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	out := []TokenRecord{}
	for rows.Next() {
		var (
			r                TokenRecord
			name, lastUsed   sql.NullString
			grant, cols, cre string
		)
		if err := rows.Scan(&r.ID, &name, &grant, &cols, &cre, &lastUsed); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		if name.Valid {
			r.Name = &name.String
		}
		r.Grant = Grant(grant)
		if r.Collections, err = decodeCollections(cols); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		r.CreatedAt, _ = time.Parse(time.RFC3339Nano, cre)
		if lastUsed.Valid {
			lu, _ := time.Parse(time.RFC3339Nano, lastUsed.String)
			r.LastUsedAt = &lu
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RevokeToken deletes the token with id; NOT_FOUND when there is none.
func (t *Tokens) RevokeToken(ctx context.Context, id string) error {
	res, err := t.db.W.ExecContext(ctx, `DELETE FROM tokens WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Errorf(CodeNotFound, "no token with that id")
	}
	return nil
}
