package query

import (
	"path"
	"strings"

	"github.com/tychora/tychora/sources"
)

// Convention priors: what a file's name or a unit's shape says about
// whether it is the place a question about code wants, by conventions
// that hold across languages. Each scales a unit's score unless the
// question asks for what it marks:
//
//   - platforms: a file made for one operating system or processor
//     (×0.75), unless the question names a platform;
//   - change logs: CHANGELOG.md, HISTORY.rst, NEWS (×0.5), unless the
//     question asks about releases;
//   - manifests: package.json, Cargo.toml, pyproject.toml (×0.5), unless
//     the question asks about dependencies or the manifest itself;
//   - build recipes: Dockerfile, Makefile, CMakeLists.txt (×0.5), unless
//     the question asks about building;
//   - import blocks: a unit that is mostly import statements (×0.5): it
//     names what is defined elsewhere;
//   - hidden files: a tool's configuration (.rubocop.yml, .eslintrc.json,
//     .github/workflows/ci.yml) (×0.5), unless the question names a word
//     of its name or folder.
//
// docs/search.md ("Files, roles and definitions") has the reasons and
// bench/README.md ("Other code bases") the measurements.

// conventions applies the convention priors for one question.
type conventions struct {
	platform, changelog, manifest, build bool // the question asks for them: no prior
	// names are the question's words for file names (nameQuery): a
	// question that names a hidden file's words asks for it
	names *nameQuery
}

func newConventions(pq *parsedQuery, names *nameQuery) *conventions {
	return &conventions{
		platform:  asksAny(pq, platformWords),
		changelog: asksAny(pq, changelogWords),
		manifest:  asksAny(pq, manifestWords),
		build:     asksAny(pq, buildWords),
		names:     names,
	}
}

// prior is the product of the convention priors that apply to c, whose
// path's facts are f.
func (cv *conventions) prior(c *candidate, f *pathFacts) float64 {
	p := 1.0
	if !cv.platform && f.platform {
		p *= platformPrior
	}
	if !cv.changelog && f.changelog && c.kind != sources.KindCode {
		p *= changelogPrior
	}
	if !cv.manifest && f.manifest {
		p *= manifestPrior
	}
	if !cv.build && f.build {
		p *= buildPrior
	}
	if f.hidden && f.nameShareOf(cv.names) == 0 {
		p *= hiddenPrior
	}
	if c.kind == sources.KindCode && c.title == "imports" && importsShare(c.text) >= importsFull {
		p *= importsPrior
	}
	return p
}

// asksAny reports whether the question holds one of the words (folded,
// unstemmed).
func asksAny(pq *parsedQuery, words map[string]bool) bool {
	for _, t := range pq.terms {
		if words[t.token] {
			return true
		}
	}
	return false
}

// platformPrior scales a unit of a file made for one operating system or
// processor (net/fd_windows.go, lp_plan9.go, sys/unix/, memmove_amd64.s)
// when the question names no platform: the portable code comes first.
const platformPrior = 0.75

// platformWords are the names of operating systems and processors as
// file and folder names spell them across languages (Go's build
// suffixes, C's win32 and posix folders, Rust's sys/unix and sys/windows).
var platformWords = map[string]bool{
	"windows": true, "win32": true, "win64": true, "darwin": true, "macos": true, "osx": true, "ios": true,
	"linux": true, "android": true, "freebsd": true, "netbsd": true, "openbsd": true, "dragonfly": true,
	"solaris": true, "illumos": true, "aix": true, "plan9": true, "hurd": true, "zos": true,
	"wasm": true, "wasip1": true, "wasi": true, "js": true, "unix": true, "posix": true, "bsd": true,
	"amd64": true, "arm64": true, "arm": true, "386": true, "x86": true, "ppc64": true, "ppc64le": true,
	"ppc64x": true, "s390x": true, "mips": true, "mipsx": true, "mips64": true, "mips64x": true, "mipsle": true,
	"riscv64": true, "loong64": true, "sparc64": true,
}

// changelogPrior scales a unit of a change log (CHANGELOG.md,
// HISTORY.rst, CHANGES, NEWS, a whatsnew folder) when the question does
// not ask about releases: a change log names every feature in a line or
// two, and is the answer to when something changed, not to where or how
// it is done.
const changelogPrior = 0.5

// changelogNames are the names (folded, without extension) change logs
// go by across ecosystems; changelogFolders the folders that hold one
// file per release.
var (
	changelogNames = map[string]bool{
		"changelog": true, "changelogs": true, "changes": true, "history": true, "news": true,
		"releases": true, "release-notes": true, "release_notes": true, "releasenotes": true, "whatsnew": true,
	}
	changelogFolders = map[string]bool{
		"changelog": true, "changelogs": true, "changelog.d": true, "whatsnew": true,
		"release-notes": true, "release_notes": true, "releasenotes": true,
	}
)

// changelogWords are the words (folded, unstemmed) of a question about
// releases, which takes the change-log prior off.
var changelogWords = map[string]bool{
	"changelog": true, "changelogs": true, "release": true, "releases": true, "released": true,
	"history": true, "news": true, "whatsnew": true, "version": true, "versions": true,
}

// changelogOf reports whether a file of the given kind is a change log:
// a file of prose (never code: history.ts is a module) whose name
// (without extensions) or a folder is one of theirs.
func changelogOf(p, kind string) bool {
	if kind == sources.KindCode {
		return false
	}
	dir, base := path.Split(p)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	lower := strings.ToLower(base)
	if changelogNames[lower] {
		return true
	}
	// An older or a version's log: ChangeLog-old.md, CHANGES-2.x.txt,
	// HISTORY_v1.rst (not history-api.md).
	if i := strings.IndexAny(lower, "-_"); i > 0 && changelogNames[lower[:i]] && changelogSuffix(lower[i+1:]) {
		return true
	}
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if changelogFolders[strings.ToLower(d)] {
			return true
		}
	}
	return false
}

// changelogSuffix reports whether what follows a change log's name
// marks an older or a version's log: old, archive, legacy, or a version
// (2, 2.x, v1).
func changelogSuffix(s string) bool {
	switch s {
	case "old", "archive", "archived", "legacy":
		return true
	}
	s = strings.TrimPrefix(s, "v")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// platformOf reports whether a path names a platform in its file name's
// parts after the first ("lp_windows.go", "sys_linux_amd64.s"; not
// "windows.go", whose name is its topic) or in a folder.
func platformOf(p string) bool {
	dir, base := path.Split(p)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	parts := strings.FieldsFunc(base, func(r rune) bool { return r == '_' || r == '-' })
	for _, w := range parts[min(1, len(parts)):] {
		if platformWords[strings.ToLower(w)] {
			return true
		}
	}
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if platformWords[strings.ToLower(d)] {
			return true
		}
	}
	return false
}

// manifestPrior scales a unit of a package manifest when the question
// does not ask about dependencies or the manifest: a manifest lists every
// module, feature and script of a project by name (package.json's
// exports, Cargo.toml's features), and is where a project is described,
// not where its code is.
const manifestPrior = 0.5

// manifestNames are the file names (folded) of package manifests across
// ecosystems.
var manifestNames = map[string]bool{
	"package.json": true, "jsr.json": true, "deno.json": true, "deno.jsonc": true, "composer.json": true,
	"cargo.toml": true, "pyproject.toml": true, "setup.cfg": true, "pipfile": true, "go.mod": true,
	"pom.xml": true, "build.gradle": true, "build.gradle.kts": true, "gemfile": true, "pubspec.yaml": true,
	"package.swift": true, "mix.exs": true, "project.clj": true, "build.sbt": true, "cabal.project": true,
}

// manifestWords are the words of a question about dependencies or a
// manifest, which take the manifest prior off.
var manifestWords = map[string]bool{
	"dependency": true, "dependencies": true, "deps": true, "manifest": true, "requirement": true,
	"requirements": true, "version": true, "versions": true, "cargo": true, "npm": true, "pyproject": true,
	"gradle": true, "maven": true, "pom": true, "gemfile": true, "composer": true,
}

// manifestOf reports whether a path is a package manifest.
func manifestOf(p string) bool {
	return manifestNames[strings.ToLower(path.Base(p))]
}

// buildPrior scales a unit of a build recipe when the question does not
// ask about building: a recipe names the project's sources, features and
// settings (a Dockerfile's locale, a CMakeLists.txt's options), and says
// how it is built, not how it works.
const buildPrior = 0.5

// buildNames are the file names (folded) of build recipes across
// ecosystems; buildExts their extensions.
var (
	buildNames = map[string]bool{
		"dockerfile": true, "containerfile": true, "makefile": true, "gnumakefile": true,
		"cmakelists.txt": true, "meson.build": true, "meson_options.txt": true, "meson.options": true,
		"configure.ac": true, "configure.in": true, "makefile.am": true, "makefile.in": true,
		"build": true, "build.bazel": true, "workspace": true, "workspace.bazel": true, "module.bazel": true,
		"jenkinsfile": true, "justfile": true, "rakefile": true, "earthfile": true, "sconstruct": true,
	}
	buildExts = map[string]bool{".mk": true, ".cmake": true, ".dockerfile": true, ".bzl": true}
)

// buildWords are the words of a question about building, which take the
// build prior off.
var buildWords = map[string]bool{
	"build": true, "builds": true, "building": true, "built": true, "compile": true, "compiles": true,
	"compiling": true, "compilation": true, "docker": true, "dockerfile": true, "container": true,
	"containers": true, "image": true, "make": true, "makefile": true, "cmake": true, "bazel": true,
	"meson": true, "autotools": true, "autoconf": true, "configure": true, "install": true,
	"installation": true, "ci": true, "jenkins": true, "toolchain": true, "link": true, "linker": true,
	"linking": true, "target": true, "targets": true, "recipe": true, "compiler": true, "cflags": true,
	"cxxflags": true, "ldflags": true, "makefiles": true, "dockerfiles": true, "builder": true,
}

// buildOf reports whether a path is a build recipe: a name of buildNames,
// an extension of buildExts, or a Dockerfile or Containerfile variant
// (Dockerfile.alpine; not a document about one, dockerfile.md).
func buildOf(p string) bool {
	base := strings.ToLower(path.Base(p))
	if buildNames[base] || buildExts[path.Ext(base)] {
		return true
	}
	switch path.Ext(base) {
	case ".md", ".markdown", ".rst", ".txt", ".adoc", ".html":
		return false
	}
	return strings.HasPrefix(base, "dockerfile.") || strings.HasPrefix(base, "containerfile.")
}

// importsPrior scales a code unit that is mostly import statements (the
// extractor titles such a block "imports": docs/extraction.md).
const importsPrior = 0.5

// importsFull is the share of a unit's lines that must be imports for
// importsPrior: a module's documentation with a few imports below it keeps
// its score.
const importsFull = 0.5

// importsShare is the share of the lines of text that are not blank
// that import: "import …", "from … import", "use …", "#include",
// "require(…)", "using …", and the lines of a statement such a line opens
// ("import {" … "} from '…'"). Comments count as lines that do not: a
// crate's or a module's documentation above its imports (Rust's //!
// lines, a Python docstring) keeps the unit from counting as imports.
func importsShare(text string) float64 {
	code, imports := 0, 0
	open := false // inside the brackets of an import statement
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		code++
		switch {
		case open:
			imports++
			if strings.ContainsAny(t, ")}") {
				open = false
			}
		case importLine(t):
			imports++
			if strings.Count(t, "{")+strings.Count(t, "(") > strings.Count(t, "}")+strings.Count(t, ")") {
				open = true
			}
		}
	}
	if code == 0 {
		return 0
	}
	return float64(imports) / float64(code)
}

// importPrefixes begin an import statement in some language.
var importPrefixes = []string{"import ", "import{", "from ", "use ", "pub use ", "#include", "#import",
	"using ", "require ", "require(", "extern crate ", "export * from", "export {"}

// importLine reports whether a trimmed line begins an import statement.
func importLine(t string) bool {
	for _, p := range importPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return strings.Contains(t, "= require(")
}

// hiddenPrior scales a unit of a hidden file, or of a file in a hidden
// folder, that the question does not name: such files configure tools
// (linters, editors, CI), and are not where a project's code is.
const hiddenPrior = 0.5

// hiddenOf reports whether a file or one of its folders is hidden (its
// name begins with a dot).
func hiddenOf(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if len(seg) > 1 && seg[0] == '.' && seg != ".." {
			return true
		}
	}
	return false
}
