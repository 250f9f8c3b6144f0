// Package testkit holds what the tests of several packages share: one raw
// HTTP request helper, a slog.Handler that keeps records, a fake of
// interfaces.Service with function fields, the life cycle of an owner
// under test and a goroutine-leak check. Only tests import it.
package testkit
