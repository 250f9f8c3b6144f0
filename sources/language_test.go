package sources

import "testing"

func TestDetectLanguage(t *testing.T) {
	tests := []struct {
		path string
		head string
		want string
	}{
		{"main.go", "", LangGo},
		{"a/b/Script.PY", "", LangPython},
		{"app.js", "", LangJavaScript},
		{"App.jsx", "", LangJavaScript},
		{"x.mjs", "", LangJavaScript},
		{"x.ts", "", LangTypeScript},
		{"View.tsx", "", LangTypeScript},
		{"lib.rs", "", LangRust},
		{"Main.java", "", LangJava},
		{"x.c", "", LangC},
		{"x.h", "", LangCPP},
		{"x.h", "#ifndef X_H\nint f(void);\n", LangC},
		{"x.h", "namespace x { class Y; }", LangCPP},
		{"x.hpp", "", LangCPP},
		{"x.cc", "", LangCPP},
		{"x.cxx", "", LangCPP},
		{"run.sh", "", LangShell},
		{"run.bash", "", LangShell},
		{"run.zsh", "", LangShell},
		{".bashrc", "", LangShell},
		{"README.md", "", LangMarkdown},
		{"index.html", "", LangHTML},
		{"page.htm", "", LangHTML},
		{"data.json", "", "json"},
		{"ci.yml", "", "yaml"},
		{"ci.yaml", "", "yaml"},
		{"Cargo.toml", "", "toml"},
		{"schema.sql", "", "sql"},
		{"site.css", "", "css"},
		{"app.rb", "", "ruby"},
		{"Main.kt", "", "kotlin"},
		{"App.swift", "", "swift"},
		{"Program.cs", "", "csharp"},
		{"index.php", "", "php"},
		{"Makefile", "", "make"},
		{"Dockerfile", "", "dockerfile"},
		{"Dockerfile.dev", "", "dockerfile"},
		{`C:\src\main.go`, "", LangGo},
		{"notes.txt", "", ""},
		{"LICENSE", "", ""},
		{"noext", "", ""},
		{"tool", "#!/usr/bin/env python3\nprint(1)\n", LangPython},
		{"tool", "#!/bin/bash\n", LangShell},
		{"tool", "#!/bin/sh -e\n", LangShell},
		{"tool", "#!/usr/bin/env -S node --no-warnings\n", LangJavaScript},
		{"tool", "#!/usr/bin/env ruby\n", "ruby"},
		{"tool", "#!/usr/bin/python2.7\n", LangPython},
		{"tool", "#!\n", ""},
		{"tool", "#!/usr/bin/env\n", ""},
		{"x.go", "#!/bin/bash\n", LangGo},

		// Names that say more than their extension.
		{"README.C++", "", ""},
		{"docs/README.c++", "", ""},
		{"README.go", "", ""},
		{"LICENSE.c", "", ""},
		{"CHANGELOG.rs", "", ""},
		{"README.md", "", LangMarkdown},
		{"README.rst", "", "restructuredtext"},
		{"README.html", "", LangHTML},
		{"README", "#!/bin/sh\n", LangShell},
		{"readme.c++", "", LangCPP},
		{"license.go", "", LangGo},
		{"changelog.go", "", LangGo},
		{"READMEs.go", "", LangGo},
		{"GNUmakefile", "", "make"},
		{"makefile", "", "make"},
		{"build.mk", "", "make"},
		{"Containerfile", "", "dockerfile"},
		{"api.Dockerfile", "", "dockerfile"},
		{"CMakeLists.txt", "", "cmake"},
		{"cmake/Deps.cmake", "", "cmake"},
		{"Rakefile", "", "ruby"},
		{"Gemfile", "", "ruby"},
		{"Vagrantfile", "", "ruby"},
		{"Brewfile", "", "ruby"},
		{"Jenkinsfile", "", "groovy"},
		{"BUILD", "", "starlark"},
		{"pkg/BUILD.bazel", "", "starlark"},
		{"WORKSPACE", "", "starlark"},
		{"MODULE.bazel", "", "starlark"},
		{"BUCK", "", "starlark"},
		{"defs.bzl", "", "starlark"},
		{"Tiltfile", "", "starlark"},
		{"build", "#!/bin/sh\n", LangShell},
		{"build", "", ""},
		{"workspace", "", ""},
	}
	for _, tt := range tests {
		var head []byte
		if tt.head != "" {
			head = []byte(tt.head)
		}
		if got := DetectLanguage(tt.path, head); got != tt.want {
			t.Errorf("DetectLanguage(%q, %q) = %q, want %q", tt.path, tt.head, got, tt.want)
		}
	}
}
