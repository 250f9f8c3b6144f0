package query

import (
	"github.com/tychora/tychora/workspace"
)

// Search cursors.
//
// A search cursor is sealed by workspace.Cursors under the kind "search"
// and a scope made of the caller's reach (workspace.ScopeKey: grant and
// collections) and the hash of the normalized request (RequestHash:
// question, modalities, profile, filters, limit). Its payload is the rank
// of the next hit. A cursor replayed by another principal scope, or with
// another request, or altered, fails HMAC verification and is
// INVALID_ARGUMENT; it never reveals or reaches evidence outside the scope
// that issued it, since every page is computed afresh within the caller's
// own scope.

const cursorKind = "search"

// searchCursor is the payload of a search cursor.
type searchCursor struct {
	Offset int `json:"o"`
}

func cursorScope(p workspace.Principal, norm QueryRequest) string {
	return workspace.ScopeKey(p) + "|" + pageKey(norm)
}

// openCursor returns the rank a normalized request starts at: 0 without a
// cursor.
func (e *Engine) openCursor(p workspace.Principal, norm QueryRequest) (int, error) {
	if norm.Cursor == "" {
		return 0, nil
	}
	var c searchCursor
	if err := e.Cursors.Open(cursorKind, cursorScope(p, norm), norm.Cursor, &c); err != nil {
		return 0, err
	}
	if c.Offset < 0 || c.Offset > maxPoolSize {
		return 0, workspace.Errorf(workspace.CodeInvalidArgument, "invalid cursor: pass next_cursor from the previous page of the same request")
	}
	return c.Offset, nil
}

func (e *Engine) sealCursor(p workspace.Principal, norm QueryRequest, offset int) (string, error) {
	return e.Cursors.Seal(cursorKind, cursorScope(p, norm), searchCursor{Offset: offset})
}

// PageCursor returns the cursor that continues the normalized request norm
// (Ranked.Request) at rank offset, for p. The caller uses it when it
// returns fewer hits than the page held (budget fitting): the next page
// then starts right after the last hit the client saw.
func (e *Engine) PageCursor(p workspace.Principal, norm QueryRequest, offset int) (string, error) {
	return e.sealCursor(p, norm, offset)
}
