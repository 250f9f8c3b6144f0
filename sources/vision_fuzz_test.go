package sources

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tychora/tychora/workspace"
)

// FuzzSelectionInput decodes arbitrary bytes as the selection form of a
// SourceInput (strictly, as the edges decode add_sources) and validates
// it: nothing panics, every refusal is INVALID_ARGUMENT, and what passes
// is what the upload policy admits.
func FuzzSelectionInput(f *testing.F) {
	sha := strings.Repeat("0f", 32)
	for _, seed := range []string{
		`{"selection_id":"sel_0123456789abcdef01234567","sha256":"` + sha + `","text":"A dialog: disk full"}`,
		`{"selection_id":"sel_1","sha256":"` + sha + `","text":"line one\r\nline two","model":"eye-1","source_id":"src_1","revision_id":"rev_1"}`,
		`{"selection_id":"sel_1","sha256":"` + sha + `","text":"x","path":"docs"}`,
		`{"selection_id":"sel_1","sha256":"` + strings.ToUpper(sha) + `","text":"x"}`,
		`{"selection_id":"sel_1","sha256":"` + sha + `","text":"\u0000"}`,
		`{"selection_id":"sel_1","sha256":"` + sha + `","text":"   "}`,
		`{"selection_id":"","text":"x"}`,
		`{"text":"\ud800"}`,
		`{"selection_id":"sel_1","sha256":"` + sha + `","text":"x","model":"a\nb","collection_id":"default"}`,
		`{"selection_id":1}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var in SourceInput
		if err := dec.Decode(&in); err != nil {
			return
		}
		err := ValidateSelection(in)
		if err != nil {
			if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
				t.Fatalf("refusal %v is not INVALID_ARGUMENT", err)
			}
			if msg := workspace.ErrorMessage(err); msg == "" || !utf8.ValidString(msg) {
				t.Fatalf("refusal message %q", msg)
			}
			return
		}
		switch {
		case !in.IsSelection() || in.SelectionID == "":
			t.Fatal("a selection without its id passed")
		case !validSHA256(in.SHA256):
			t.Fatalf("hash %q passed", in.SHA256)
		case len(in.Text) > MaxSelectionTextBytes || !utf8.ValidString(in.Text) || strings.IndexByte(in.Text, 0) >= 0 || strings.TrimSpace(in.Text) == "":
			t.Fatalf("text %q passed", workspace.Clip(in.Text, 80))
		case len(in.Model) > MaxModelBytes || strings.ContainsAny(in.Model, "\x00\r\n"):
			t.Fatalf("model %q passed", in.Model)
		case in.Path != "" || in.Kind != "" || len(in.Include) > 0 || len(in.Exclude) > 0 || in.Watch != nil:
			t.Fatal("a selection with path-form fields passed")
		}
		if err := validateInput(in); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Fatalf("the path form took a selection: %v", err)
		}
	})
}
