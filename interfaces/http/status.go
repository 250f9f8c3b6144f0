package httpapi

import (
	"net/http"

	"github.com/tychora/tychora/workspace"
)

// codeStatus is the one code → HTTP status table. docs/errors.md repeats it
// and a test keeps the two equal.
var codeStatus = map[workspace.Code]int{
	workspace.CodeInvalidArgument:      http.StatusBadRequest,
	workspace.CodeUnauthenticated:      http.StatusUnauthorized,
	workspace.CodePermissionDenied:     http.StatusForbidden,
	workspace.CodeOutOfRoots:           http.StatusForbidden,
	workspace.CodeNotFound:             http.StatusNotFound,
	workspace.CodeConflict:             http.StatusConflict,
	workspace.CodeReplayUnavailable:    http.StatusConflict,
	workspace.CodeOutputBudgetExceeded: http.StatusUnprocessableEntity,
	workspace.CodeUnavailable:          http.StatusServiceUnavailable,
	workspace.CodeInternal:             http.StatusInternalServerError,
}

// HTTPStatus maps a code to its HTTP status; an unknown code is 500.
func HTTPStatus(c workspace.Code) int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
