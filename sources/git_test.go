package sources

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	sha1A = "0123456789abcdef0123456789abcdef01234567"
	sha1B = "89abcdef0123456789abcdef0123456789abcdef"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadHeadByHand(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // relative to the working tree
		want  GitHead
		err   bool
	}{
		{"loose ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": sha1A + "\n"},
			GitHead{Commit: sha1A, Ref: "refs/heads/main"}, false},
		{"packed ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n",
			".git/packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + sha1B + " refs/heads/dev\n" + sha1A + " refs/heads/main\n^" + sha1B + "\n"},
			GitHead{Commit: sha1A, Ref: "refs/heads/main"}, false},
		{"loose wins over packed", map[string]string{".git/HEAD": "ref: refs/heads/main", ".git/refs/heads/main": sha1B,
			".git/packed-refs": sha1A + " refs/heads/main\n"}, GitHead{Commit: sha1B, Ref: "refs/heads/main"}, false},
		{"detached", map[string]string{".git/HEAD": sha1A + "\n"}, GitHead{Commit: sha1A}, false},
		{"unborn", map[string]string{".git/HEAD": "ref: refs/heads/main\n"}, GitHead{Ref: "refs/heads/main"}, false},
		{"symbolic chain", map[string]string{".git/HEAD": "ref: refs/heads/alias\n", ".git/refs/heads/alias": "ref: refs/heads/main\n",
			".git/refs/heads/main": sha1A}, GitHead{Commit: sha1A, Ref: "refs/heads/alias"}, false},
		{"sha256 repository", map[string]string{".git/HEAD": strings.Repeat("ab", 32)}, GitHead{Commit: strings.Repeat("ab", 32)}, false},
		{"garbage", map[string]string{".git/HEAD": "hello"}, GitHead{}, true},
		{"escaping ref", map[string]string{".git/HEAD": "ref: refs/../../etc/passwd"}, GitHead{}, true},
		{"worktree", map[string]string{
			".git":                                "gitdir: ../main/.git/worktrees/wt\n",
			"../main/.git/worktrees/wt/HEAD":      "ref: refs/heads/feature\n",
			"../main/.git/worktrees/wt/commondir": "../..\n",
			"../main/.git/refs/heads/feature":     sha1B + "\n",
		}, GitHead{Commit: sha1B, Ref: "refs/heads/feature"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			tree := filepath.Join(base, "tree")
			if err := os.MkdirAll(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, content := range c.files {
				writeFile(t, filepath.Join(tree, filepath.FromSlash(p)), content)
			}
			got, err := ReadHead(tree)
			if (err != nil) != c.err {
				t.Fatalf("ReadHead: %v, want error %v", err, c.err)
			}
			if !c.err && got != c.want {
				t.Fatalf("ReadHead = %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := ReadHead(t.TempDir()); err == nil {
		t.Fatal("ReadHead of a plain directory: no error")
	}
}

// git runs the git binary in dir with a configuration of its own.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestRepositoryRevisionRecordsHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary; TestReadHeadByHand covers the formats")
	}
	e := newEnv(t)
	repo := filepath.Join(e.root, "repo")
	e.write("repo/main.go", "package main\n\nfunc main() {}\n")
	e.write("repo/.gitignore", "*.out\n")
	e.write("repo/a.out", "built\n")
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "one")
	head1 := git(t, repo, "rev-parse", "HEAD")

	src := e.add(SourceInput{Path: "repo"})
	if src.Kind != KindRepository {
		t.Fatalf("kind %q", src.Kind)
	}
	st := e.sync(src.ID)
	if st.Commit != head1 || st.Ref != "refs/heads/main" {
		t.Fatalf("stats commit %q ref %q, want %q", st.Commit, st.Ref, head1)
	}
	revs, err := listRevisions(context.Background(), e.db, src.ID)
	if err != nil || len(revs) != 1 || revs[0].Commit == nil || *revs[0].Commit != head1 {
		t.Fatalf("revisions %+v %v", revs, err)
	}
	if got := e.skips(src.ID); got["a.out"] != SkipIgnored {
		t.Fatalf("skips %v", got)
	}

	// A new commit without a content change still makes a revision: the
	// commit is part of it.
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
	head2 := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "pack-refs", "--all") // the ref now lives in packed-refs
	st = e.sync(src.ID)
	if !st.NewRevision || st.Commit != head2 || st.RevisionNumber != 2 {
		t.Fatalf("after commit: %+v", st)
	}

	// Detached HEAD.
	git(t, repo, "checkout", "-q", "--detach", head1)
	if h, err := ReadHead(repo); err != nil || h.Commit != head1 || h.Ref != "" {
		t.Fatalf("detached: %+v %v", h, err)
	}

	// A linked worktree: .git is a file.
	git(t, repo, "checkout", "-q", "main")
	git(t, repo, "branch", "feature", head1)
	wt := filepath.Join(e.root, "wt")
	git(t, repo, "worktree", "add", "-q", wt, "feature")
	if h, err := ReadHead(wt); err != nil || h.Commit != head1 || h.Ref != "refs/heads/feature" {
		t.Fatalf("worktree: %+v %v", h, err)
	}
	wsrc := e.add(SourceInput{Path: "wt"})
	if wsrc.Kind != KindRepository {
		t.Fatalf("worktree kind %q", wsrc.Kind)
	}
	if st := e.sync(wsrc.ID); st.Commit != head1 {
		t.Fatalf("worktree sync: %+v", st)
	}
}
