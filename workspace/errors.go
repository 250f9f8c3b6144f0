package workspace

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Code is a public error code (DESIGN §4). Callers branch on codes, never on
// message text.
type Code string

// The error codes of the public contract.
const (
	CodeInvalidArgument      Code = "INVALID_ARGUMENT"
	CodeUnauthenticated      Code = "UNAUTHENTICATED"
	CodePermissionDenied     Code = "PERMISSION_DENIED"
	CodeOutOfRoots           Code = "OUT_OF_ROOTS"
	CodeNotFound             Code = "NOT_FOUND"
	CodeConflict             Code = "CONFLICT"
	CodeReplayUnavailable    Code = "REPLAY_UNAVAILABLE"
	CodeOutputBudgetExceeded Code = "OUTPUT_BUDGET_EXCEEDED"
	CodeUnavailable          Code = "UNAVAILABLE"
	CodeInternal             Code = "INTERNAL"
)

// Codes lists every public code in a stable order.
func Codes() []Code {
	return []Code{CodeInvalidArgument, CodeUnauthenticated, CodePermissionDenied,
		CodeOutOfRoots, CodeNotFound, CodeConflict, CodeReplayUnavailable,
		CodeOutputBudgetExceeded, CodeUnavailable, CodeInternal}
}

// Valid reports whether c is one of the public codes.
func (c Code) Valid() bool {
	for _, k := range Codes() {
		if c == k {
			return true
		}
	}
	return false
}

// Error is the one application error type. Message is safe to show to the
// caller; Err is the internal cause, kept for logs and errors.Is, and never
// sent over the wire.
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted, caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error whose internal cause is err; msg is what the caller
// sees.
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, INTERNAL
// for any other non-nil error, and "" for nil. A fault that comes from a
// full disk (IsDiskFull) is UNAVAILABLE rather than INTERNAL: the caller
// can do something about it.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && (e.Code != CodeInternal || !IsDiskFull(err)) {
		return e.Code
	}
	if IsDiskFull(err) {
		return CodeUnavailable
	}
	return CodeInternal
}

// ErrorMessage returns the caller-safe message of err: an *Error's Message,
// a plain word that the disk is full (IsDiskFull), or a generic text for
// anything else, so that internal detail (SQL, paths, stack traces) never
// leaves the process.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && (e.Code != CodeInternal || !IsDiskFull(err)) {
		return e.Message
	}
	if IsDiskFull(err) {
		return diskFullMessage
	}
	return "internal error"
}

// Public converts any error into an *Error safe to send: its own code and
// message, or INTERNAL with a generic message.
func Public(err error) *Error {
	if err == nil {
		return nil
	}
	return &Error{Code: ErrorCode(err), Message: ErrorMessage(err)}
}

// Clip shortens s, for an error message, to at most n bytes of valid
// UTF-8, marking the cut with "…": a caller's value quoted in a message
// never makes it long and never breaks its encoding.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
