package sources

import (
	"testing"
	"unicode/utf16"
)

func TestImageFormat(t *testing.T) {
	for mime, want := range map[string]string{
		"image/png": "png", "image/jpeg": "jpeg", "image/svg+xml": "svg", "image/x-icon": "ico",
		"image/vnd.microsoft.icon": "ico", "image/tiff": "tiff", "image/webp": "webp",
		"image/bmp": "bmp", "image/avif": "avif", "image/heic": "heic", "image/gif": "gif",
	} {
		if got := imageFormat(mime); got != want {
			t.Errorf("imageFormat(%q) = %q, want %q", mime, got, want)
		}
	}
}

// TestSyncUTF16: a UTF-16 file with its byte order mark is text, decoded;
// one that is not valid UTF-16 is undecodable, not indexed with its NULs.
func TestSyncUTF16(t *testing.T) {
	e := newEnv(t)
	enc := func(s string, le bool) string {
		var b []byte
		if le {
			b = append(b, 0xFF, 0xFE)
		} else {
			b = append(b, 0xFE, 0xFF)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			if le {
				b = append(b, byte(u), byte(u>>8))
			} else {
				b = append(b, byte(u>>8), byte(u))
			}
		}
		return string(b)
	}
	e.write("w/le.txt", enc("first line\r\nquokkaword here 🎉\r\n", true))
	e.write("w/be.txt", enc("wombatword\n", false))
	e.write("w/odd.txt", enc("numbatword\n", true)+"x")
	e.write("w/lone.txt", enc("x", true)+"\x00\xd8")
	e.write("w/nul.bin", enc("a\x00b", true))
	src := e.add(SourceInput{Path: "w"})
	e.sync(src.ID)
	for w, n := range map[string]int{"quokkaword": 1, "wombatword": 1, "numbatword": 0} {
		if got := e.match(w); got != n {
			t.Errorf("MATCH %s: %d, want %d", w, got, n)
		}
	}
	if got := e.skips(src.ID); got["odd.txt"] != SkipUndecodable || got["lone.txt"] != SkipUndecodable || got["nul.bin"] != SkipBinary {
		t.Errorf("skips %v", got)
	}
	var text string
	var start, end int
	if err := e.db.R.QueryRow(`SELECT text, start_line, end_line FROM evidence WHERE source_id = ? AND path = 'le.txt' AND leaf = 1`, src.ID).Scan(&text, &start, &end); err != nil {
		t.Fatal(err)
	}
	if text != "first line\nquokkaword here 🎉" && text != "first line\nquokkaword here 🎉\n" || start != 1 || end != 2 {
		t.Errorf("le.txt leaf %q lines %d-%d", text, start, end)
	}
}
