package sources

import (
	"strings"
	"testing"
	"time"
)

// TestExtractLargeInputs runs every extractor on 256 KiB inputs built to
// trip quadratic behaviour, checks the unit contract on them and fails if
// one takes absurdly long (a linear pass takes well under a second).
func TestExtractLargeInputs(t *testing.T) {
	big := 256 << 10
	rep := func(s string) string { return strings.Repeat(s, big/len(s)) }
	cases := []struct {
		name string
		x    Extractor
		in   string
	}{
		{"md indented openers", markdownExtractor{}, rep("    ````x\n```\n")},
		{"md indented openers2", markdownExtractor{}, rep("    ```x\n")},
		{"md one line", markdownExtractor{}, strings.Repeat("word ", big/5)},
		{"md setext", markdownExtractor{}, rep("a\n") + "===\n"},
		{"md headings", markdownExtractor{}, rep("# h\n")},
		{"go braces", newCodeExtractor(LangGo), rep("{\n")},
		{"go closers", newCodeExtractor(LangGo), rep("}\n")},
		{"go funcs", newCodeExtractor(LangGo), rep("func f() {}\n")},
		{"go simple", newCodeExtractor(LangGo), rep("var x = 1\n")},
		{"c incomplete", newCodeExtractor(LangC), rep("FOO(x)\n\n")},
		{"java prefixes", newCodeExtractor(LangJava), rep("@A\n")},
		{"py indent", newCodeExtractor(LangPython), "class A:\n" + rep("    def f(self):\n        pass\n")},
		{"py nested", newCodeExtractor(LangPython), rep("class A:\n    x = 1\n")},
		{"shell heredocs", newCodeExtractor(LangShell), rep("cat <<A <<B\n")},
		{"rust comments", newCodeExtractor(LangRust), rep("/* /*\n")},
		{"html", htmlExtractor{}, rep("<p>x</p>\n")},
		{"html one line", htmlExtractor{}, rep("<h2>x</h2><p>y</p>")},
		{"text", textExtractor{}, rep("a\n\n")},
		{"text blank", textExtractor{}, "x\n" + rep("\n") + "y\n"},
	}
	for _, c := range cases {
		start := time.Now()
		ex, err := c.x.Extract("f", c.in)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("%-22s %7d units %v", c.name, len(ex.Units), took)
		if took > 10*time.Second {
			t.Errorf("%s: took %v", c.name, took)
		}
		if err := checkUnits(c.in, ex, c.x.Name() != htmlExtractorName); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
