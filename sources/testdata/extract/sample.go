// Copyright 2025 The Tychora Authors.

// Package sample shows how the code extractor splits Go.
package sample

import (
	"context"
	"fmt"
)

const (
	// A is a constant.
	A = 1
	B = "}"
)

var errClosed = fmt.Errorf("closed")

var limit = 10

// Server serves things.
type Server struct {
	name string
	ch   chan struct{}
}

// Start starts the server.
// It never blocks.
func (s *Server) Start(ctx context.Context) error {
	raw := `a raw string
func notADecl() {
}`
	if s.name == "{" {
		return errClosed
	}
	_ = raw
	return nil
}

func Map[T any, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func init() { fmt.Println('}') }

// trailing comment at the end of the file
