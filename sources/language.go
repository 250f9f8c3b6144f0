package sources

import (
	"bytes"
	"path"
	"strings"
)

// Language identifiers returned by DetectLanguage. Other identifiers
// (ruby, kotlin, sql, ...) are plain lower-case names; see languageByExt.
const (
	LangGo         = "go"
	LangPython     = "python"
	LangJavaScript = "javascript"
	LangTypeScript = "typescript"
	LangRust       = "rust"
	LangJava       = "java"
	LangC          = "c"
	LangCPP        = "cpp"
	LangShell      = "shell"
	LangMarkdown   = "markdown"
	LangHTML       = "html"
)

// languageByExt maps a lower-case file extension (with its dot) to a
// language identifier.
var languageByExt = map[string]string{
	".go":       LangGo,
	".py":       LangPython,
	".pyi":      LangPython,
	".pyw":      LangPython,
	".js":       LangJavaScript,
	".mjs":      LangJavaScript,
	".cjs":      LangJavaScript,
	".jsx":      LangJavaScript,
	".ts":       LangTypeScript,
	".mts":      LangTypeScript,
	".cts":      LangTypeScript,
	".tsx":      LangTypeScript,
	".rs":       LangRust,
	".java":     LangJava,
	".c":        LangC,
	".h":        LangCPP, // refined by sniffing the head; see DetectLanguage
	".cc":       LangCPP,
	".cpp":      LangCPP,
	".cxx":      LangCPP,
	".c++":      LangCPP,
	".hh":       LangCPP,
	".hpp":      LangCPP,
	".hxx":      LangCPP,
	".h++":      LangCPP,
	".ipp":      LangCPP,
	".inl":      LangCPP,
	".sh":       LangShell,
	".bash":     LangShell,
	".zsh":      LangShell,
	".ksh":      LangShell,
	".md":       LangMarkdown,
	".markdown": LangMarkdown,
	".mdown":    LangMarkdown,
	".mkd":      LangMarkdown,
	".mdx":      LangMarkdown,
	".html":     LangHTML,
	".htm":      LangHTML,
	".xhtml":    LangHTML,

	// Other programming languages.
	".rb":      "ruby",
	".rake":    "ruby",
	".gemspec": "ruby",
	".kt":      "kotlin",
	".kts":     "kotlin",
	".swift":   "swift",
	".cs":      "csharp",
	".php":     "php",
	".scala":   "scala",
	".sc":      "scala",
	".groovy":  "groovy",
	".gradle":  "groovy",
	".dart":    "dart",
	".lua":     "lua",
	".pl":      "perl",
	".pm":      "perl",
	".r":       "r",
	".jl":      "julia",
	".ex":      "elixir",
	".exs":     "elixir",
	".erl":     "erlang",
	".hrl":     "erlang",
	".hs":      "haskell",
	".elm":     "elm",
	".ml":      "ocaml",
	".mli":     "ocaml",
	".fs":      "fsharp",
	".fsx":     "fsharp",
	".clj":     "clojure",
	".cljs":    "clojure",
	".cljc":    "clojure",
	".lisp":    "lisp",
	".el":      "lisp",
	".scm":     "scheme",
	".zig":     "zig",
	".nim":     "nim",
	".m":       "objc",
	".mm":      "objc",
	".ps1":     "powershell",
	".psm1":    "powershell",
	".bat":     "batch",
	".cmd":     "batch",
	".sql":     "sql",
	".css":     "css",
	".scss":    "scss",
	".sass":    "sass",
	".less":    "less",
	".vue":     "vue",
	".svelte":  "svelte",
	".proto":   "protobuf",
	".graphql": "graphql",
	".gql":     "graphql",
	".tf":      "hcl",
	".hcl":     "hcl",
	".nix":     "nix",
	".vim":     "vim",
	".cmake":   "cmake",
	".mk":      "make",
	".bzl":     "starlark",
	".star":    "starlark",

	// Data and configuration.
	".json":       "json",
	".jsonc":      "json",
	".json5":      "json",
	".jsonl":      "json",
	".ndjson":     "json",
	".yaml":       "yaml",
	".yml":        "yaml",
	".toml":       "toml",
	".xml":        "xml",
	".xsd":        "xml",
	".xsl":        "xml",
	".plist":      "xml",
	".ini":        "ini",
	".cfg":        "ini",
	".conf":       "ini",
	".properties": "properties",
	".csv":        "csv",
	".tsv":        "tsv",

	// Prose markup other than markdown and HTML.
	".rst":      "restructuredtext",
	".adoc":     "asciidoc",
	".asciidoc": "asciidoc",
	".org":      "org",
	".tex":      "latex",
}

// languageByName maps a lower-case base name to a language identifier for
// files known by name rather than extension.
var languageByName = map[string]string{
	"makefile":        "make",
	"gnumakefile":     "make",
	"dockerfile":      "dockerfile",
	"containerfile":   "dockerfile",
	"cmakelists.txt":  "cmake",
	"gemfile":         "ruby",
	"rakefile":        "ruby",
	"podfile":         "ruby",
	"vagrantfile":     "ruby",
	"brewfile":        "ruby",
	"guardfile":       "ruby",
	"jenkinsfile":     "groovy",
	"build.bazel":     "starlark",
	"workspace.bazel": "starlark",
	"module.bazel":    "starlark",
	"tiltfile":        "starlark",
	".bashrc":         LangShell,
	".bash_profile":   LangShell,
	".bash_logout":    LangShell,
	".zshrc":          LangShell,
	".zprofile":       LangShell,
	".zshenv":         LangShell,
	".profile":        LangShell,
	".envrc":          LangShell,
	"pkgbuild":        LangShell,
}

// languageByExactName maps a base name, in the case it must be written,
// to a language identifier: Bazel's and Buck's BUILD files are Starlark,
// while a file named "build" is more often a shell script.
var languageByExactName = map[string]string{
	"BUILD":     "starlark",
	"WORKSPACE": "starlark",
	"BUCK":      "starlark",
}

// docStems are the names, written in capitals, of a project's
// documentation files. With a programming language's extension
// (README.C++, NOTES.go) such a file is prose about that language, not
// source in it.
var docStems = map[string]bool{
	"README": true, "LICENSE": true, "LICENCE": true, "COPYING": true, "NOTICE": true,
	"CHANGELOG": true, "CHANGES": true, "NEWS": true, "HISTORY": true, "AUTHORS": true,
	"CONTRIBUTORS": true, "CONTRIBUTING": true, "MAINTAINERS": true, "THANKS": true,
	"CREDITS": true, "HACKING": true, "TODO": true, "NOTES": true,
}

// languageByInterpreter maps a shebang interpreter (its base name, version
// digits dropped) to a language identifier.
var languageByInterpreter = map[string]string{
	"sh":      LangShell,
	"bash":    LangShell,
	"zsh":     LangShell,
	"ksh":     LangShell,
	"dash":    LangShell,
	"ash":     LangShell,
	"python":  LangPython,
	"pypy":    LangPython,
	"node":    LangJavaScript,
	"nodejs":  LangJavaScript,
	"deno":    LangTypeScript,
	"ts-node": LangTypeScript,
	"tsx":     LangTypeScript,
	"bun":     LangTypeScript,
	"ruby":    "ruby",
	"perl":    "perl",
	"php":     "php",
	"lua":     "lua",
	"rscript": "r",
	"julia":   "julia",
	"elixir":  "elixir",
	"pwsh":    "powershell",
}

// DetectLanguage names the language of a file from its path and, when the
// extension does not tell, from the first bytes of its content (a shebang
// such as "#!/usr/bin/env python3"). head may be nil. It returns "" when no
// language applies (plain text, unknown formats).
//
// A known name wins over the extension (CMakeLists.txt is cmake,
// BUILD.bazel starlark), and a documentation file named in capitals is
// text whatever its extension says (README.C++). The extension wins over
// the shebang. ".h" is "cpp" unless head is given and shows no C++
// construct, in which case it is "c". Matching is case-insensitive but for
// BUILD, WORKSPACE, BUCK and the documentation names; path may use either
// slash.
func DetectLanguage(p string, head []byte) string {
	written := path.Base(strings.ReplaceAll(p, "\\", "/"))
	if lang, ok := languageByExactName[written]; ok {
		return lang
	}
	base := strings.ToLower(written)
	if lang, ok := languageByName[base]; ok {
		return lang
	}
	if strings.HasPrefix(base, "dockerfile.") || strings.HasSuffix(base, ".dockerfile") {
		return "dockerfile"
	}
	ext := path.Ext(base)
	if ext == ".h" && len(head) > 0 && !looksLikeCPP(head) {
		return LangC
	}
	if lang, ok := languageByExt[ext]; ok {
		if stem, _, _ := strings.Cut(written, "."); docStems[stem] && kindOfLanguage(lang) == KindCode {
			return "" // README.C++: text
		}
		return lang
	}
	return shebangLanguage(head)
}

// shebangLanguage reads "#!/path/interp args" or "#!/usr/bin/env [-S] interp".
func shebangLanguage(head []byte) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	interp := path.Base(fields[0])
	if interp == "env" {
		interp = ""
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue
			}
			interp = path.Base(f)
			break
		}
	}
	interp = strings.ToLower(strings.TrimRight(interp, "0123456789."))
	return languageByInterpreter[interp]
}

// cppMarkers are byte strings that only C++ headers contain.
var cppMarkers = [][]byte{
	[]byte("class "), []byte("namespace "), []byte("template"), []byte("std::"),
	[]byte("public:"), []byte("private:"), []byte("protected:"), []byte("#include <iostream>"),
	[]byte("constexpr"), []byte("nullptr"), []byte("virtual "),
}

func looksLikeCPP(head []byte) bool {
	for _, m := range cppMarkers {
		if bytes.Contains(head, m) {
			return true
		}
	}
	return false
}
