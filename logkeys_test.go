package tychora_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// logMethods are the *slog.Logger methods that take a message and then
// key/value pairs or attributes.
var logMethods = map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true}

// TestLogKeysAreConstants: no log call outside tests and bench/ writes an
// attribute key as a string literal; the keys are workspace/logkeys.go's
// constants (docs/architecture.md, "Logs").
func TestLogKeysAreConstants(t *testing.T) {
	fset := token.NewFileSet()
	calls := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == "bench" || path == "interop") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "slog" {
				// slog.String("key", …), slog.Int64("key", …), …
				if len(call.Args) == 2 && isStringLit(call.Args[0]) && sel.Sel.Name != "New" {
					t.Errorf("%s: slog.%s with the literal key %s: use a workspace.Log constant", fset.Position(call.Pos()), sel.Sel.Name, lit(call.Args[0]))
				}
				return true
			}
			if !logMethods[sel.Sel.Name] || len(call.Args) < 1 || !isStringLit(call.Args[0]) {
				return true
			}
			calls++
			for i := 1; i < len(call.Args); i++ {
				arg := call.Args[i]
				if isSlogCall(arg) {
					continue // an attribute: one argument
				}
				if isStringLit(arg) {
					t.Errorf("%s: log call with the literal key %s: use a workspace.Log constant", fset.Position(arg.Pos()), lit(arg))
				}
				i++ // the key's value
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 20 {
		t.Fatalf("found only %d log calls: the walk looks wrong", calls)
	}
}

func isStringLit(e ast.Expr) bool {
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.STRING
}

func lit(e ast.Expr) string { return e.(*ast.BasicLit).Value }

func isSlogCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "slog"
}
