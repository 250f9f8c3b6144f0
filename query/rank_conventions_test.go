package query

import "testing"

// The path conventions (rank_conventions.go): which paths are package
// manifests, build recipes and hidden files.
func TestPathConventions(t *testing.T) {
	for name, tc := range map[string]struct {
		of    func(string) bool
		paths map[string]bool
	}{
		"manifestOf": {manifestOf, map[string]bool{
			"package.json": true, "packages/core/package.json": true, "Cargo.toml": true, "pyproject.toml": true,
			"go.mod": true, "src/package.ts": false, "cargo.rs": false, "docs/package.json.md": false,
		}},
		"buildOf": {buildOf, map[string]bool{
			"Dockerfile": true, "docker/Dockerfile.alpine": true, "Makefile": true, "src/Makefile.am": true,
			"CMakeLists.txt": true, "test/compile-error-test/CMakeLists.txt": true, "cmake/fmt-config.cmake": true,
			"meson.build": true, "BUILD.bazel": true, "build/rules.mk": true, "Jenkinsfile": true,
			"build/main.go": false, "src/build.rs": false, "docs/dockerfile.md": false, "builder.py": false,
			"make.go": false,
		}},
		"hiddenOf": {hiddenOf, map[string]bool{
			".rubocop.yml": true, ".github/workflows/ci.yml": true, "web/.eslintrc.json": true,
			"lib/base.rb": false, "../x.go": false, "a/b.c": false,
		}},
	} {
		for p, want := range tc.paths {
			if got := tc.of(p); got != want {
				t.Errorf("%s(%q) = %v, want %v", name, p, got, want)
			}
		}
	}
}

// A build recipe that holds the question's words (a Dockerfile's UTF-8
// locale) ranks after the code, unless the question asks about building.
func TestBuildRecipesAfterTheCode(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("jq", "default", map[string]string{
		"Dockerfile":       "FROM debian:12-slim AS builder\n\nENV LC_ALL=C.UTF-8 \\\n    LANG=C.UTF-8\n\nRUN apt-get update && apt-get install -y build-essential\n",
		"src/jv_unicode.c": "#include \"jv_unicode.h\"\n\n// Decodes one UTF-8 code point at in, validating the bytes.\nconst char* jvp_utf8_next(const char* in, const char* end, int* codepoint_ret) {\n  int codepoint = -1;\n  unsigned char first = (unsigned char)in[0];\n  int length = utf8_coding_length[first];\n  if (in + length > end) { codepoint = -1; length = end - in; }\n  *codepoint_ret = codepoint;\n  return in + length;\n}\n",
	})
	env.wantFirst(t, "decode UTF-8", "src/jv_unicode.c", "the code")
	env.wantFirst(t, "UTF-8 locale of the docker image", "Dockerfile", "asking about the image")
}

func TestImportsShare(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		min, max   float64
	}{
		{"typescript imports", "/**\n * @module\n */\n\nimport type { Context } from '../../context'\nimport {\n  METHOD_NAME_ALL,\n  UnsupportedPathError,\n} from '../../router'\nimport { Trie } from './trie'\n", 0.66, 0.67},
		{"rust crate documentation", "//! # Serde JSON\n//!\n//! JSON is a ubiquitous open-standard format.\n//! Operating on untyped JSON values.\n//!\n//! More prose.\n\nuse std::fmt;\npub use crate::map::Map;\n", 0.25, 0.25},
		{"python imports", "import os\nfrom typing import (\n    Any,\n    List,\n)\n", 1, 1},
		{"rust uses", "use std::fmt;\npub use crate::map::Map;\nextern crate alloc;\n", 1, 1},
		{"c includes", "#include <stdio.h>\n#include \"x.h\"\n", 1, 1},
		{"commonjs", "'use strict'\n\nvar debug = require('debug')('express:view');\nvar path = require('node:path');\n", 0.66, 0.67},
		{"python module docstring", "\"\"\"Sessions keep state between requests.\n\nA session is a dict signed with the secret key, sent as a cookie\nand read back on the next request.\n\"\"\"\nimport hashlib\n", 0.2, 0.2},
		{"code", "const a = 1\nfunction f() {}\n", 0, 0},
	} {
		if got := importsShare(tt.text); got < tt.min || got > tt.max {
			t.Errorf("%s: importsShare = %.3f, want %.2f..%.2f", tt.name, got, tt.min, tt.max)
		}
	}
}

// Import blocks and package manifests name what is defined elsewhere: the
// module that defines it comes first, and a question about dependencies
// still finds the manifest.
func TestImportsAndManifestsAfterTheDefinition(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("h", "default", map[string]string{
		"package.json":                     "{\n  \"name\": \"web\",\n  \"description\": \"match a route fast: trie router, route matching\",\n  \"exports\": {\n    \"./trie-router\": \"./dist/router/trie-router/index.js\",\n    \"./match-route\": \"./dist/router/match-route.js\"\n  },\n  \"dependencies\": { \"trie-match\": \"1.0.0\" }\n}\n",
		"src/middleware/allow.ts":          "import { TrieRouter } from '../router/trie-router'\nimport { matchRoute, matchedRoutes } from '../helper/route'\nimport { TrieMatchRouter } from '../router/trie-match-router'\n\nexport const allow = () => 1\n",
		"src/router/trie-router/router.ts": "export class TrieRouter {\n  // find the handlers for a path\n  match(method: string, path: string) {\n    return this.node.search(method, path)\n  }\n}\n",
	})
	env.wantFirst(t, "match a route with the trie router", "src/router/trie-router/router.ts", "the definition")
	env.wantFirst(t, "which version of the trie dependency", "package.json", "asking about dependencies")
}

// A tool's hidden configuration ranks after the code, unless the question
// names it.
func TestHiddenConfigurationAfterTheCode(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("s", "default", map[string]string{
		".rubocop.yml": "# settings: enable and disable the cops\nStyle/Documentation:\n  Enabled: false\nLint/Settings:\n  Enabled: true\n  Disable: settings\n",
		"lib/base.rb":  "module Base\n  # Disable settings: the same as set(name, false); enable is set(name, true).\n  def disable(*opts)\n    opts.each { |key| set(key, false) }\n  end\nend\n",
	})
	env.wantFirst(t, "settings enable and disable", "lib/base.rb", "the code")
	env.wantFirst(t, "which rubocop settings are disabled", ".rubocop.yml", "naming the tool")
}
