// Package corpus holds what the benchmark programs do to their copy of a
// corpus.
package corpus

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Rewrite appends a newline to every regular file under dir, so that each
// one's content changes, and returns how many it changed.
func Rewrite(dir string) (int, error) {
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n")
		files++
		return errors.Join(err, f.Close())
	})
	return files, err
}
