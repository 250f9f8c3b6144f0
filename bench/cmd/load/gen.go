package main

import (
	"bufio"
	"fmt"
	"go/scanner"
	"go/token"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// genSeed fixes the distinct questions: the same tree and seed give the
// same file.
const genSeed = 1

// genDistinct writes n distinct questions made of identifiers and comment
// words of the Go files under dir: a third single identifiers, a third an
// identifier with one or two words, a third three to six words.
func genDistinct(w io.Writer, dir string, n int) error {
	idents := map[string]int{}
	words := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile(p, -1, len(src)), src, nil, scanner.ScanComments)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			switch tok {
			case token.IDENT:
				if len(lit) >= 5 && len(lit) <= 24 && unicode.IsUpper(rune(lit[0])) && !strings.Contains(lit, "_") {
					idents[lit]++
				}
			case token.COMMENT:
				for _, f := range strings.FieldsFunc(lit, func(r rune) bool { return !unicode.IsLetter(r) }) {
					if len(f) >= 4 && len(f) <= 12 && f == strings.ToLower(f) && !stop[f] {
						words[f]++
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Common enough to be real vocabulary, not so common that every
	// document matches.
	pick := func(m map[string]int, lo, hi int) []string {
		var out []string
		for k, c := range m {
			if c >= lo && c <= hi {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	id := pick(idents, 3, 400)
	wd := pick(words, 5, 2000)
	if len(id) < 100 || len(wd) < 100 {
		return fmt.Errorf("%s: too few identifiers (%d) or words (%d)", dir, len(id), len(wd))
	}
	r := rand.New(rand.NewPCG(genSeed, 0))
	seen := map[string]bool{}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %d distinct questions for bench/load.sh scenarios c and d, made by\n", n)
	fmt.Fprintf(bw, "#   go run ./bench/cmd/load -gen-distinct DIR -n %d\n", n)
	fmt.Fprintf(bw, "# from the identifiers and comment words of DIR = $(go env GOROOT)/src (seed %d).\n", genSeed)
	for len(seen) < n {
		var parts []string
		switch len(seen) % 3 {
		case 0:
			parts = []string{id[r.IntN(len(id))]}
		case 1:
			parts = []string{id[r.IntN(len(id))]}
			for range 1 + r.IntN(2) {
				parts = append(parts, wd[r.IntN(len(wd))])
			}
		default:
			for range 3 + r.IntN(4) {
				parts = append(parts, wd[r.IntN(len(wd))])
			}
		}
		q := strings.Join(parts, " ")
		if seen[q] {
			continue
		}
		seen[q] = true
		fmt.Fprintln(bw, q)
	}
	return bw.Flush()
}

// stop are comment words too common to make a question.
var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`this that with from have will when than then there their they them
		each which what where were been into only also must should would could does done same such
		other more most some many much very used uses using here just like make makes made
		returns return value values true false nil func type case else file files`) {
		stop[w] = true
	}
}
