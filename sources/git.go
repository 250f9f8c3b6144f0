package sources

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotRepository means a directory has no usable .git entry.
var ErrNotRepository = errors.New("not a git repository")

// GitHead is what a repository's HEAD points at. Commit is "" on an unborn
// branch (a repository without commits yet).
type GitHead struct {
	Commit string // full hex object name (40 for SHA-1, 64 for SHA-256)
	Ref    string // "refs/heads/main", or "" when HEAD is detached
}

// maxRefBytes bounds what is read from HEAD and loose ref files.
const maxRefBytes = 4096

// gitDirs locates the git directory of the working tree at root and the
// common directory that holds refs, packed-refs and info/: both .git for a
// plain repository; for a linked worktree or a submodule, .git is a file
// "gitdir: PATH" and the common directory is named by PATH/commondir.
func gitDirs(root string) (gitDir, commonDir string, err error) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrNotRepository, err)
	}
	gitDir = dotgit
	if !fi.IsDir() {
		b, err := readSmall(dotgit)
		if err != nil {
			return "", "", err
		}
		line := strings.TrimSpace(string(b))
		p, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return "", "", fmt.Errorf("%w: .git file has no gitdir line", ErrNotRepository)
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		gitDir = filepath.Clean(p)
	}
	commonDir = gitDir
	if b, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		commonDir = filepath.Clean(p)
	}
	return gitDir, commonDir, nil
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, maxRefBytes)
	n, err := f.Read(b)
	if n == 0 && err != nil {
		return nil, err
	}
	return b[:n], nil
}

// ReadHead reads the HEAD commit of the working tree at root without running
// git: HEAD, then a symbolic ref chain through loose refs (in the worktree's
// git directory, then the common one) and packed-refs. A detached HEAD
// yields its object name and no Ref. Repositories using the reftable ref
// storage are not understood (an error).
func ReadHead(root string) (GitHead, error) {
	gitDir, commonDir, err := gitDirs(root)
	if err != nil {
		return GitHead{}, err
	}
	b, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return GitHead{}, fmt.Errorf("read HEAD: %w", err)
	}
	content := strings.TrimSpace(string(b))
	var head GitHead
	for range 8 { // bounded symbolic-ref chain
		ref, ok := strings.CutPrefix(content, "ref:")
		if !ok {
			if !isObjectName(content) {
				return GitHead{}, fmt.Errorf("read HEAD: unexpected content %q", truncate(content, 80))
			}
			head.Commit = content
			return head, nil
		}
		ref = strings.TrimSpace(ref)
		if !validRefName(ref) {
			return GitHead{}, fmt.Errorf("read HEAD: bad ref name %q", truncate(ref, 80))
		}
		if head.Ref == "" {
			head.Ref = ref
		}
		next, err := lookupRef(gitDir, commonDir, ref)
		if errors.Is(err, fs.ErrNotExist) {
			return head, nil // unborn branch
		}
		if err != nil {
			return GitHead{}, err
		}
		content = next
	}
	return GitHead{}, errors.New("read HEAD: symbolic ref chain too long")
}

// lookupRef returns the content of a ref: a loose file in the worktree's or
// the common git directory, else its line in packed-refs.
func lookupRef(gitDir, commonDir, ref string) (string, error) {
	dirs := []string{gitDir}
	if commonDir != gitDir {
		dirs = append(dirs, commonDir)
	}
	for _, d := range dirs {
		b, err := readSmall(filepath.Join(d, filepath.FromSlash(ref)))
		if err == nil {
			return strings.TrimSpace(string(b)), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
			return "", fmt.Errorf("read ref: %w", err)
		}
	}
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		name, refname, ok := bytes.Cut(line, []byte{' '})
		if ok && string(bytes.TrimSpace(refname)) == ref {
			return string(name), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read packed-refs: %w", err)
	}
	return "", fs.ErrNotExist
}

func isDirErr(err error) bool {
	return errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR)
}

func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validRefName accepts the refs HEAD can name: under refs/, no '..', no
// control characters, nothing absolute.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") || strings.HasSuffix(ref, "/") {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] < 0x20 || ref[i] == 0x7f || ref[i] == '\\' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
