package query

import (
	"github.com/tychora/tychora/workspace"
)

// Search cursors.
//
// A search cursor is a number cursor sealed by workspace.Cursors under the
// kind "search" and a scope made of the caller's reach (workspace.ScopeKey:
// grant and collections) and the hash of the normalized request
// (RequestHash: question, modalities, profile, filters, limit). Its number
// is the rank of the next hit. A cursor replayed by another principal scope, or with
// another request, or altered, fails HMAC verification and is
// INVALID_ARGUMENT; it never reveals or reaches evidence outside the scope
// that issued it, since every page is computed afresh within the caller's
// own scope.

const cursorKind = "search"

func cursorScope(p workspace.Principal, norm QueryRequest) string {
	return workspace.ScopeKey(p) + "|" + pageKey(norm)
}

// openCursor returns the rank a normalized request starts at: 0 without a
// cursor.
func (e *Engine) openCursor(p workspace.Principal, norm QueryRequest) (int, error) {
	if norm.Cursor == "" {
		return 0, nil
	}
	off, err := e.Cursors.OpenNumber(cursorKind, cursorScope(p, norm), norm.Cursor)
	if err != nil {
		return 0, err
	}
	if off > maxPoolSize {
		return 0, workspace.Errorf(workspace.CodeInvalidArgument, "invalid cursor: pass next_cursor from the previous page of the same request")
	}
	return off, nil
}

// sealCursor is a number cursor (workspace.Cursors.SealNumber): digits
// only, of one length, so that every search cursor costs the same tokens
// and an answer's size does not move with the page it continues to.
func (e *Engine) sealCursor(p workspace.Principal, norm QueryRequest, offset int) (string, error) {
	return e.Cursors.SealNumber(cursorKind, cursorScope(p, norm), offset)
}

// PageCursor returns the cursor that continues the normalized request norm
// (Ranked.Request) at rank offset, for p. The caller uses it when it
// returns fewer hits than the page held (budget fitting): the next page
// then starts right after the last hit the client saw.
func (e *Engine) PageCursor(p workspace.Principal, norm QueryRequest, offset int) (string, error) {
	return e.sealCursor(p, norm, offset)
}
