package sources

import (
	"go/build"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"parseHTTPRequest", []string{"parse", "http", "request"}},
		{"ParseHTTPRequest", []string{"parse", "http", "request"}},
		{"parse_http_request", []string{"parse", "http", "request"}},
		{"parse-http-request", []string{"parse", "http", "request"}},
		{"PARSE_HTTP_REQUEST", []string{"parse", "http", "request"}},
		{"HTTPServer", []string{"http", "server"}},
		{"os.ReadFile", []string{"os", "read", "file"}},
		{"std::vector", []string{"std", "vector"}},
		{"utf8Decode", []string{"utf8", "decode"}},
		{"HTTP2Server", []string{"http2", "server"}},
		{"int32Value", []string{"int32", "value"}},
		{"x86_64", []string{"x86", "64"}},
		{"Vector3D", []string{"vector3", "d"}},
		{"sha256sum", []string{"sha256sum"}},
		{"URLs", []string{"urls"}},
		{"getIDs", []string{"get", "ids"}},
		{"IDsToURLs", []string{"ids", "to", "urls"}},
		{"JSONString", []string{"json", "string"}},
		{"IOError", []string{"io", "error"}},
		{"a", []string{"a"}},
		{"_private", []string{"private"}},
		{"__init__", []string{"init"}},
		{"where is parseHTTPRequest?", []string{"where", "is", "parse", "http", "request"}},
		{"end of sentence. Next", []string{"end", "of", "sentence", "next"}},
		{"--verbose", []string{"verbose"}},
		{"a--b", []string{"a", "b"}},
		{"naïveBayes", []string{"naïve", "bayes"}},
		{"ÉcoleNormale", []string{"école", "normale"}},
		{"1.2.3", []string{"1", "2", "3"}},
		{"", nil},
		{"  ...  ", nil},
	}
	for _, tt := range tests {
		if got := SplitIdentifier(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodeTerms(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"parseHTTPRequest", "parse http request"},
		{"ParseHTTPRequest parse_http_request parse-http-request", "parse http request parse http request parse http request"},
		{"data, err := os.ReadFile(name)", "os read file"},
		{"plain words only", ""},
		{"version 1.2.3 and 10-20", ""},
		{"f(x.y, x.y, x.y)", "x y"},
		{"utf8Decode(HTTPServer)", "utf8 utf decode http server"},
		{"func Parse12_3(r *Request)", "parse12 parse 3"},
		{"int64 int64 x86 sha256sum v2beta Parse7", "int parse"},
		{"x86_64 HTTP2Server", "x86 64 http2 http server"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CodeTerms(tt.in); got != tt.want {
			t.Errorf("CodeTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// benchSource returns a few MB of Go source: the standard library's
// net/http package when it is there, else the golden inputs repeated.
func benchSource(b *testing.B) string {
	b.Helper()
	var sb strings.Builder
	dir := filepath.Join(build.Default.GOROOT, "src", "net", "http")
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil {
			sb.Write(data)
		}
		if sb.Len() > 4<<20 {
			break
		}
	}
	if sb.Len() < 1<<20 {
		names, _ = filepath.Glob(filepath.Join("testdata", "extract", "*"))
		for sb.Len() < 4<<20 {
			for _, n := range names {
				data, _ := os.ReadFile(n)
				sb.Write(data)
			}
		}
	}
	return sb.String()
}

func BenchmarkCodeTerms(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		CodeTerms(src)
	}
}

func BenchmarkExtractGo(b *testing.B) {
	src := benchSource(b)
	x := newCodeExtractor(LangGo)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.Extract("bench.go", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEstimateTokens(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		EstimateTokens(src)
	}
}

// TestJoinLetterDigit: a hyphen between two letters or more and a digit
// goes (IL-6, UTF-8); one letter before it (x-1) or a digit after a
// letter run that is not there stays.
func TestJoinLetterDigit(t *testing.T) {
	for in, want := range map[string]string{
		"IL-6": "IL6", "GLP-1R": "GLP1R", "UTF-8": "UTF8", "SHA-256": "SHA256", "interleukin-2": "interleukin2",
		"ISO-8859-1": "ISO8859-1", "x-1": "x-1", "n-1": "n-1", "5-HT": "5-HT", "IL-": "IL-", "-6": "-6",
		"fast-twitch": "fast-twitch", "CK-666-x": "CK666-x", "ab-1-cd-2": "ab1-cd2", "": "",
	} {
		if got := JoinLetterDigit(in); got != want {
			t.Errorf("JoinLetterDigit(%q) = %q, want %q", in, got, want)
		}
	}
	terms := " " + CodeTerms("Bcl-2 and IL-6; IL-6 again; x-1") + " "
	for _, want := range []string{" bcl2 ", " il6 "} {
		if !strings.Contains(terms, want) {
			t.Errorf("CodeTerms: %q lacks %q", terms, want)
		}
	}
	if strings.Count(terms, " il6 ") != 1 || strings.Contains(terms, " x1 ") {
		t.Errorf("CodeTerms: %q: il6 once and no x1 wanted", terms)
	}
}

// FuzzJoinLetterDigit: the join only drops hyphens, is idempotent, and
// leaves no hyphen it would drop.
func FuzzJoinLetterDigit(f *testing.F) {
	for _, s := range []string{"IL-6", "ab-1-cd-2", "x-1", "é-1", "ab--1", "ab-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := JoinLetterDigit(s)
		if strings.ReplaceAll(got, "-", "") != strings.ReplaceAll(s, "-", "") || len(got) > len(s) {
			t.Fatalf("JoinLetterDigit(%q) = %q: more than hyphens changed", s, got)
		}
		if again := JoinLetterDigit(got); again != got {
			t.Fatalf("JoinLetterDigit(%q) = %q, then %q", s, got, again)
		}
	})
}
