package sources

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// fuzzLanguages are the languages FuzzExtractCode picks from: every
// scanner, plus one language of kind code without a scanner.
var fuzzLanguages = func() []string {
	var langs []string
	for l := range codeLangs {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	return append(langs, "vue")
}()

// addGoldenSeeds adds the golden inputs whose extension is in exts.
func addGoldenSeeds(f *testing.F, add func(name, text string), exts ...string) {
	f.Helper()
	names, _ := filepath.Glob(filepath.Join("testdata", "extract", "*"))
	for _, n := range names {
		for _, e := range exts {
			if filepath.Ext(n) == e {
				data, err := os.ReadFile(n)
				if err != nil {
					f.Fatal(err)
				}
				add(n, string(data))
			}
		}
	}
}

func fuzzCheck(t *testing.T, x Extractor, text string, verbatim bool) {
	t.Helper()
	ex, err := x.Extract("dir/fuzz.in", text)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if err := checkUnits(text, ex, verbatim); err != nil {
		t.Fatal(err)
	}
	again, _ := x.Extract("dir/fuzz.in", text)
	if len(again.Units) != len(ex.Units) {
		t.Fatalf("not deterministic: %d then %d units", len(ex.Units), len(again.Units))
	}
}

func FuzzExtractMarkdown(f *testing.F) {
	addGoldenSeeds(f, func(_, text string) { f.Add(text) }, ".md")
	for _, s := range []string{
		"", "\n", "#", "# a\n#", "---\n---", "---\ntitle: x\n", "a\n===\nb\n---\n",
		"```\n# no\n", "    ```\n# x\n    ```\n", "<!--\n# x\n", "~~~~\n~~~\n# x\n~~~~\n# y",
		"- a\n---\n", "| a |\n| b |\n", strings.Repeat("word ", 2000), strings.Repeat("x\n", 3000),
		"# h\n" + strings.Repeat("`a`|", 1000) + "\n```\n" + strings.Repeat("é", 3000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fuzzCheck(t, markdownExtractor{}, text, true)
	})
}

func FuzzExtractCode(f *testing.F) {
	langIndex := map[string]byte{}
	for i, l := range fuzzLanguages {
		langIndex[l] = byte(i)
	}
	addGoldenSeeds(f, func(name, text string) {
		f.Add(langIndex[DetectLanguage(name, nil)], text)
	}, ".go", ".py", ".ts", ".rs", ".java", ".c", ".sh")
	for i := range fuzzLanguages {
		for _, s := range []string{
			"", "}", "{", "'", "\"", "`", "/*", "\"\"\"", "r#\"", "<<EOF\n", "@x\n", "class A {\n",
			"class A:\n  def f(self):\n    pass\n", "fn f() {\n}\n}\n}", "a /* b\n c */ d\n", "if x; then\nfi\nfi",
			"x\n" + strings.Repeat("f(a,b);", 800) + "\n}",
			"\ufeff#region R\nusing A;\n#if X\nclass C : B\n#if Y\n, I\n#endif\n{\n#if Z\nint x;\n#endif\n}\n#endregion\n",
		} {
			f.Add(byte(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, sel byte, text string) {
		lang := fuzzLanguages[int(sel)%len(fuzzLanguages)]
		fuzzCheck(t, newCodeExtractor(lang), text, true)
	})
}

func FuzzExtractHTML(f *testing.F) {
	addGoldenSeeds(f, func(_, text string) { f.Add(text) }, ".html")
	for _, s := range []string{
		"", "<h1>", "<h1>a</h1><h2>b</h2>", "<pre>\n\n</pre>", "<script>", "<title>t</title><h1>x",
		"a\n<h2>b</h2>\nc", "<svg><h1>x</h1>", "<body><head>x</head>y", "&amp;\n\n<p>\x00</p>",
		strings.Repeat("<p>a b</p>", 2000), "<pre>" + strings.Repeat("x;", 2000) + "\n\ny</pre>", "<h1>" + strings.Repeat("w ", 3000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fuzzCheck(t, htmlExtractor{}, text, false)
	})
}

func FuzzExtractText(f *testing.F) {
	addGoldenSeeds(f, func(_, text string) { f.Add(text) }, ".txt")
	for _, s := range []string{"", "\n\n\n", "a", "a\r\nb\r\n", strings.Repeat("para graph\n\n", 400), strings.Repeat("y", 5000),
		".. x::\n  y\n\nTitle\n=====\n\nbody\n", "===\nab\n===\n", "= Doc\n\nx\n", "#+TITLE: t\n"} {
		f.Add(s)
	}
	// Each markup's title rules on the same text (the language is a
	// setting of the extractor, not of the text).
	languages := []string{"", "restructuredtext", "asciidoc", "org"}
	f.Fuzz(func(t *testing.T, text string) {
		for _, lang := range languages {
			fuzzCheck(t, textExtractor{kind: KindText, language: lang}, text, true)
		}
	})
}

// FuzzLineWindows: the windows of any line are the line, in order, each
// within MaxLineBytes and MaxLineTokens and ending on a character
// boundary; a line within the limits is one window.
func FuzzLineWindows(f *testing.F) {
	for _, s := range []string{
		"", "a", strings.Repeat("word ", 1000), strings.Repeat("x", 4097), strings.Repeat("日本", 700),
		strings.Repeat("a;", 600), strings.Repeat(" ", 3000) + "z", strings.Repeat("\xe6\x97", 2000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkWindows(t, "fuzz", line, lineWindows(line))
	})
}

func FuzzCodeTerms(f *testing.F) {
	for _, s := range []string{
		"", "parseHTTPRequest", "os.ReadFile", "parse-http-request", "x86_64 utf8Decode URLs",
		"std::vector<int>", "a..b--c::d", "ÉcoleNormale naïveBayes 日本語Text", "1.2.3", "_._-_",
		"IFN-γ/β ά", "Aβ-42 IL-6 x-1", "μm kΩ μ-x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		terms := CodeTerms(text)
		if terms != CodeTerms(text) {
			t.Fatal("not deterministic")
		}
		if strings.HasPrefix(terms, " ") || strings.HasSuffix(terms, " ") || strings.Contains(terms, "  ") {
			t.Fatalf("badly spaced terms %q", terms)
		}
		parts := SplitIdentifier(text)
		set := map[string]bool{}
		for _, p := range parts {
			if p == "" {
				t.Fatalf("empty part in %q", parts)
			}
			set[p] = true
			if n := letterStem(p); n > 0 {
				set[p[:n]] = true
			}
		}
		// A compound's other forms: its Greek letters named, then its
		// hyphens between letters and digits dropped.
		for _, c := range Compounds(text) {
			named := nameGreekWord(c)
			set[strings.ToLower(named)] = true
			set[strings.ToLower(JoinLetterDigit(named))] = true
		}
		for _, term := range strings.Fields(terms) {
			if !set[term] {
				t.Fatalf("term %q not among the parts %q or other forms of the compounds", term, parts)
			}
		}
		if utf8.ValidString(text) && isASCII(text) {
			lower := strings.ToLower(text)
			for _, p := range parts {
				if !strings.Contains(lower, p) {
					t.Fatalf("part %q not in %q", p, text)
				}
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// FuzzDecodeUTF16: what decodes is valid UTF-8 and encodes back to the
// same code units; what does not is an odd length or an unpaired
// surrogate.
func FuzzDecodeUTF16(f *testing.F) {
	for _, s := range []string{"", "a\x00", "\x3d\xd8\x89\xdf", "\x00\xd8", "\x00\xdc\x41\x00", "abc"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, little bool) {
		var order binary.ByteOrder = binary.BigEndian
		if little {
			order = binary.LittleEndian
		}
		out, ok := decodeUTF16(data, order)
		if !ok {
			if len(data)%2 == 0 {
				units := make([]uint16, len(data)/2)
				for i := range units {
					units[i] = order.Uint16(data[2*i:])
				}
				if !slices.ContainsFunc(units, func(u uint16) bool { return utf16.IsSurrogate(rune(u)) }) {
					t.Fatalf("refused %x, which holds no surrogate", data)
				}
			}
			return
		}
		if !utf8.Valid(out) {
			t.Fatalf("decoded %x to invalid UTF-8", data)
		}
		back := utf16.Encode([]rune(string(out)))
		if len(back)*2 != len(data) {
			t.Fatalf("%x decoded to %q, which encodes to %d units", data, out, len(back))
		}
		for i, u := range back {
			if order.Uint16(data[2*i:]) != u {
				t.Fatalf("%x decoded to %q, which does not encode back", data, out)
			}
		}
	})
}
