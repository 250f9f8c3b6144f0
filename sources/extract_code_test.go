package sources

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func titlesOf(ex Extracted) []string {
	var out []string
	for _, s := range sectionsOf(ex) {
		out = append(out, fmt.Sprintf("%s@%d-%d", s.Title, s.Start, s.End))
	}
	return out
}

func TestCodeSections(t *testing.T) {
	tests := []struct {
		name, lang, in string
		want           []string
	}{
		{"go receiver and generics", LangGo,
			"package p\n\nfunc (s *Server) Start(ctx context.Context) error {\n\treturn nil\n}\n\nfunc Map[T any](x T) T { return x }\n",
			[]string{"package p@1-1", "func (s *Server) Start@3-5", "func Map@7-7"}},
		{"go doc comments attach forward", LangGo,
			"package p\n\n// A does a.\n// More.\nfunc A() {\n}\n\n// trailing\n",
			[]string{"package p@1-1", "func A@3-8"}},
		{"go raw string with braces", LangGo,
			"package p\n\nvar s = `{\nfunc x() {\n`\n\nfunc B() {}\n",
			[]string{"package p@1-1", "var s@3-5", "func B@7-7"}},
		{"go groups", LangGo,
			"package p\n\nimport \"fmt\"\n\nvar (\n\ta = 1\n)\n\ntype T int\ntype U int\n",
			[]string{"package p@1-3", "var (…)@5-7", "type T int, type U int@9-10"}},
		{"python decorators and else", LangPython,
			"import os\n\n@app.route(\"/\")\n@login\ndef index():\n    return 1\n\nif x:\n    pass\nelse:\n    pass\n",
			[]string{"imports@1-1", "def index@3-6", "if x@8-11"}},
		{"python triple string", LangPython,
			"s = \"\"\"\ndef nope():\n\"\"\"\n\nclass A:\n    pass\n",
			[]string{"s@1-3", "class A@5-6"}},
		{"js arrow and call", LangJavaScript,
			"const f = async (a) => {\n  return `${a}}`;\n};\n\ntest(\"adds\", () => {\n  expect(1).toBe(1);\n});\n",
			[]string{"const f@1-3", "test(\"adds\")@5-7"}},
		{"js regex and chained call", LangJavaScript,
			"const re = /[}{]/;\nfetch(x)\n  .then(f);\n\nfunction g() {}\n",
			[]string{"const re@1-1", "fetch@2-3", "function g@5-5"}},
		{"rust attributes and lifetimes", LangRust,
			"use std::fmt;\n\n#[derive(Debug)]\n\npub struct P<'a> {\n    s: &'a str,\n}\n\nfn c<'a>() -> char {\n    '}'\n}\n",
			[]string{"imports@1-1", "pub struct P<'a>@3-7", "fn c<'a>@9-11"}},
		{"rust restricted visibility", LangRust,
			"pub(crate) enum ErrorCode {\n    Eof,\n}\n\npub(in crate::de) fn parse(s: &str) -> u8 {\n    0\n}\n",
			[]string{"pub(crate) enum ErrorCode@1-3", "pub(in crate::de) fn parse@5-7"}},
		{"c allman and preprocessor", LangC,
			"#include <stdio.h>\n#define X 1 \\\n  + 2\n\nint\nmain(void)\n{\n  return 0;\n}\n",
			[]string{"imports@1-1", "#define X@2-3", "int main@5-9"}},
		{"cpp template", LangCPP,
			"template <typename T>\nT max(T a, T b) {\n  return a > b ? a : b;\n}\n",
			[]string{"T max@1-4"}},
		{"java annotation gap", LangJava,
			"package a;\n\n@Deprecated\n\nclass A {\n}\n",
			[]string{"package a@1-1", "class A@3-6"}},
		{"shell heredoc and keywords", LangShell,
			"f() {\n  cat <<-EOF\n\t}\n\tEOF\n}\nif true; then\necho\nfi\nwhile x; do\n  y\ndone\n",
			[]string{"f()@1-5", "if true@6-8", "while x@9-11"}},
		{"unterminated block comment", LangGo,
			"package p\n/* open\nfunc A() {}\n",
			[]string{"package p@1-3"}},
		{"sql dollar quoting", "sql",
			"CREATE FUNCTION f() RETURNS int AS $$\n  SELECT 1;\n$$ LANGUAGE sql;\n\nSELECT 2;\n",
			[]string{"CREATE FUNCTION f@1-3", "SELECT 2@5-5"}},
		{"ruby end", "ruby",
			"require 'x'\n\nclass A\n  def f\n  end\nend\n\ndef g\nend\n",
			[]string{"imports@1-1", "class A@3-6", "def g@8-9"}},
		{"ruby percent literals", "ruby",
			"PARAMS = %r{(?:;#{PARAM})*}.freeze\nWORDS = %w[\n  a b\n]\n\ndef halt(*response)\n  x = 7 % 3\n  s = %(a #{x})\nend\n\ndef g\nend\n",
			[]string{"PARAMS@1-1", "WORDS@2-4", "def halt@6-9", "def g@11-12"}},
		{"ruby regex literals", "ruby",
			"def attachment(name)\n  params = format('; filename=\"%s\"', name.gsub(/[\"\\r\\n]/, TABLE))\n  ok = name =~ /[\";,]/\nend\n\ndef g\nend\n",
			[]string{"def attachment@1-4", "def g@6-7"}},
		{"c++ linkage guard", LangC,
			"#ifdef __cplusplus\nextern \"C\" {\n#endif\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint sub(int a, int b) {\n  return a - b;\n}\n\n#ifdef __cplusplus\n}\n#endif\n",
			[]string{"#ifdef __cplusplus@1-1", "extern \"C\"@2-3", "int add@5-7", "int sub@9-11", "#ifdef __cplusplus@13-15"}},
		{"c conditional braces", LangC,
			"static void\ngethex(int x)\n{\n\tenum {\n#ifdef IEEE /*{{*/\n\t\temax = 1,\n\t\temin = 2\n#else /*}{*/\n\t\temin = 3,\n\t\temax = 4\n#endif /*}}*/\n\t};\n#ifdef A\n\tif (x) {\n#else\n\tif (!x) {\n#endif\n\t\tx++;\n\t}\n}\n\nint after(void) {\n\treturn 0;\n}\n",
			[]string{"static void gethex@1-20", "int after@22-24"}},
		{"css rules", "css",
			"a, b {\n  color: red;\n}\n@media (max-width: 1px) {\n  a { x: y; }\n}\n",
			[]string{"a, b@1-3", "@media (max-width: 1px)@4-6"}},
		{"crlf and bom", LangGo,
			"\ufeffpackage p\r\n\r\nimport \"fmt\"\r\n\r\nfunc A() {\r\n}\r\n",
			[]string{"package p@1-3", "func A@5-6"}},
		{"c bom include", LangC,
			"\ufeff#include <a.h>\nint x;\n",
			[]string{"imports@1-1", "int x@2-2"}},
		{"no scanner", "vue",
			"<template>\n</template>\n",
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := newCodeExtractor(tt.lang).Extract("f", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkUnits(tt.in, ex, true); err != nil {
				t.Fatal(err)
			}
			if got := titlesOf(ex); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sections\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// bigClass makes a class with n methods in Java or Python.
func bigClass(lang string, n int) string {
	var sb strings.Builder
	if lang == LangJava {
		sb.WriteString("public class Big {\n    private int a;\n\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "    /** M%d. */\n    @Override\n    public int m%d(int x) {\n        int y = x * %d + a;\n        return y;\n    }\n\n", i, i, i)
		}
		sb.WriteString("}\n")
		return sb.String()
	}
	sb.WriteString("class Big(Base):\n    \"\"\"Doc.\"\"\"\n\n    a = 1\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "    @property\n    def m%d(self, x):\n        y = x * %d + self.a\n        return y\n\n", i, i)
	}
	return sb.String()
}

func TestCodeSplitsLargeContainers(t *testing.T) {
	for _, lang := range []string{LangJava, LangPython} {
		in := bigClass(lang, 40)
		ex, _ := newCodeExtractor(lang).Extract("f", in)
		if err := checkUnits(in, ex, true); err != nil {
			t.Fatal(err)
		}
		secs := sectionsOf(ex)
		if len(secs) != 42 {
			t.Fatalf("%s: got %d sections, want 42: %+v", lang, len(secs), secs[:3])
		}
		container := secs[0].Title
		if !strings.Contains(container, "class Big") || secs[0].Path != container {
			t.Errorf("%s: header section %+v", lang, secs[0])
		}
		m := secs[5]
		if !strings.Contains(m.Title, "m3") || m.Path != container+" > "+m.Title {
			t.Errorf("%s: member section %+v", lang, m)
		}
		lines := splitLines(in)
		end := len(lines)
		for isBlank(lines[end-1]) {
			end--
		}
		if last := secs[len(secs)-1]; last.End != end {
			t.Errorf("%s: last member ends at %d, want %d (the closing line)", lang, last.End, end)
		}
	}
	// A docstring of several lines stays with its class, also with a
	// prefix: the header section is the class line and the docstring.
	for _, quote := range []string{`"""`, `r"""`} {
		in := strings.Replace(bigClass(LangPython, 40), `"""Doc."""`, quote+"Doc of Big.\n\n    More about it.\n    \"\"\"", 1)
		ex, _ := newCodeExtractor(LangPython).Extract("f", in)
		if err := checkUnits(in, ex, true); err != nil {
			t.Fatal(err)
		}
		secs := sectionsOf(ex)
		if len(secs) != 42 || !strings.HasPrefix(secs[0].Title, "class Big") || secs[0].Start != 1 || secs[0].End < 5 || strings.Contains(secs[1].Title, "Doc") {
			t.Errorf("python docstring of several lines (%s): %d sections, first %+v, second %q", quote, len(secs), secs[0], secs[1].Title)
		}
	}
	// A small class stays whole.
	in := bigClass(LangJava, 2)
	ex, _ := newCodeExtractor(LangJava).Extract("f", in)
	if n := len(sectionsOf(ex)); n != 1 {
		t.Errorf("small class: %d sections, want 1", n)
	}
}

func TestCodeFacets(t *testing.T) {
	tests := []struct {
		path, text string
		test, gen  string
	}{
		{"a/b_test.go", "package b\n", "true", "false"},
		{"test_x.py", "", "true", "false"},
		{"src/x.spec.ts", "", "true", "false"},
		{"src/test/java/FooTest.java", "", "true", "false"},
		{"x.go", "// Code generated by stringer. DO NOT EDIT.\npackage x\n", "false", "true"},
		{"x.go", "package x\n", "false", "false"},
		{"contest.go", "", "false", "false"},
	}
	for _, tt := range tests {
		ex, _ := ExtractorFor(tt.path, "").Extract(tt.path, tt.text)
		if ex.Facets["is_test"] != tt.test || ex.Facets["generated"] != tt.gen {
			t.Errorf("%s: facets %v, want is_test=%s generated=%s", tt.path, ex.Facets, tt.test, tt.gen)
		}
	}
}

// Conditional directives title and cut nothing: a class whose base list
// has an #if keeps its own title and its members theirs, and imports
// under #if stay one unit (Newtonsoft.Json's JContainer had been one
// statement titled #endif).
func TestCodeConditionalDirectives(t *testing.T) {
	var b strings.Builder
	b.WriteString("\ufeff#region License\n// Copyright.\n#endregion\n\nusing System;\n#if HAVE_LINQ\nusing System.Linq;\n#else\nusing Bridge;\n#endif\n\nnamespace N\n{\n")
	b.WriteString("    public abstract class JContainer : JToken, IList<JToken>\n#if HAVE_MODEL\n        , ITypedList\n#endif\n    {\n")
	b.WriteString("#if HAVE_MODEL\n        private int _model;\n#endif\n\n")
	for i := range 30 {
		fmt.Fprintf(&b, "        /// <summary>Member %d of the container.</summary>\n        public void Member%d(object content)\n        {\n            Add(content, %d);\n        }\n\n", i, i, i)
	}
	b.WriteString("        public void Merge(object content)\n        {\n            MergeItem(content);\n        }\n    }\n}\n")
	in := b.String()
	ex, err := newCodeExtractor("csharp").Extract("JContainer.cs", in)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkUnits(in, ex, true); err != nil {
		t.Fatal(err)
	}
	titles := map[string]bool{}
	for _, u := range ex.Units[1:] {
		titles[u.Title] = true
		if strings.HasPrefix(u.Title, "#") {
			t.Errorf("a unit titled %q (lines %d-%d)", u.Title, u.StartLine, u.EndLine)
		}
	}
	for _, want := range []string{"imports", "public abstract class JContainer : JToken, IList<JToken>", "public void Merge", "public void Member7"} {
		if !titles[want] {
			t.Errorf("no unit titled %q; titles %v", want, titlesOf(ex))
		}
	}
}
