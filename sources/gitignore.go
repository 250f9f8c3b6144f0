package sources

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxIgnoreFileBytes bounds how much of one .gitignore (or info/exclude)
// is read; the rest is ignored.
const maxIgnoreFileBytes = 1 << 20

// parseIgnore turns the content of a .gitignore file into patterns whose
// domain is the directory (as path elements from the ignore base) that
// holds it. It follows gitignore(5): a UTF-8 BOM is dropped, CRLF and LF
// both end lines, blank lines and lines starting with '#' are skipped; "\#"
// and "\!" escape a leading '#' or '!' (the matcher treats '\' as an
// escape), trailing spaces are dropped unless escaped.
func parseIgnore(content []byte, domain []string) []gitignore.Pattern {
	content = bytes.TrimPrefix(content, utf8BOM)
	var ps []gitignore.Pattern
	for len(content) > 0 {
		var line []byte
		line, content, _ = bytes.Cut(content, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		s := string(line)
		if strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}

// readIgnoreFile reads and parses one ignore file; a missing file, or one
// that is not a regular file, yields nothing.
func readIgnoreFile(path string, domain []string) ([]gitignore.Pattern, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	if err != nil {
		return nil, err
	}
	return parseIgnore(b, domain), nil
}

// ignored reports whether path (elements from the ignore base) is ignored by
// the patterns, given in increasing priority: the last pattern that matches
// decides, as in git.
func ignored(ps []gitignore.Pattern, path []string, isDir bool) bool {
	for i := len(ps) - 1; i >= 0; i-- {
		switch ps[i].Match(path, isDir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

// ignoreBase finds where ignore rules for a folder at root start: the
// nearest directory from root up to (and including) the ingest root that
// holds .git; root itself when there is none. It returns the base, the
// elements of root relative to it, and the patterns of info/exclude and of
// every .gitignore from the base down to root's parent, in priority order.
// Files outside the ingest root are never read.
func ignoreBase(root, ingestRoot string) (base string, prefix []string, ps []gitignore.Pattern, err error) {
	base = root
	if ingestRoot != "" && within(root, ingestRoot) {
		for dir := root; ; dir = filepath.Dir(dir) {
			if hasGitEntry(dir) {
				base = dir
				break
			}
			if dir == ingestRoot || dir == filepath.Dir(dir) {
				break
			}
		}
	}
	if base != root {
		rel, err := filepath.Rel(base, root)
		if err != nil {
			return "", nil, nil, err
		}
		prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	if _, common, err := gitDirs(base); err == nil {
		xs, err := readIgnoreFile(filepath.Join(common, "info", "exclude"), nil)
		if err != nil {
			return "", nil, nil, err
		}
		ps = append(ps, xs...)
	}
	// .gitignore files of the ancestors between base and root (root's own
	// is read by the walk).
	dir := base
	for i := 0; i < len(prefix); i++ {
		xs, err := readIgnoreFile(filepath.Join(dir, ".gitignore"), prefix[:i])
		if err != nil {
			return "", nil, nil, err
		}
		ps = append(ps, xs...)
		dir = filepath.Join(dir, prefix[i])
	}
	return base, prefix, ps, nil
}
