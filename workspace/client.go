package workspace

import "context"

// ClientHeader is the HTTP header in which a process that talks to the
// owner (a stdio bridge, a CLI command) names itself: an id of its own,
// new at every start. The owner's admission of searches tells callers
// that share the owner token apart by it (docs/search.md).
const ClientHeader = "X-Tychora-Client"

// MaxClientIDBytes bounds a ClientHeader value.
const MaxClientIDBytes = 64

// ValidClientID reports whether id may name a client: 1 to
// MaxClientIDBytes ASCII letters, digits, '-' and '_'.
func ValidClientID(id string) bool {
	if id == "" || len(id) > MaxClientIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

type clientKey struct{}

// WithClient returns a context that carries the client instance id.
func WithClient(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientKey{}, id)
}

// ClientFrom returns the client instance id in ctx, or "".
func ClientFrom(ctx context.Context) string {
	id, _ := ctx.Value(clientKey{}).(string)
	return id
}
