package interfaces

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tychora/tychora/sources"
)

// selectionFormDescription is the description of SourceInput: its two
// forms, and what becomes of a selection's text.
var selectionFormDescription = fmt.Sprintf(`The source to add (action add), in one of two forms. `+
	`The path form adds a file, folder or repository: {"path":"docs","kind"?,"collection_id"?,"include"?,"exclude"?,"name"?,"watch"?}. `+
	`The selection form records the text seen in an image that inspect source_selections listed: `+
	`{"selection_id":"sel_...","sha256":"<the selection's sha256>","text":"...","model"?,"source_id"?,"revision_id"?,"collection_id"?}; `+
	`it takes no path. The text (a transcription, a description, or both; valid UTF-8, at most %d bytes) becomes one evidence unit `+
	`of kind vision in the image's file, searchable and related to the image's evidence (relation describes); `+
	`submitting again for the same selection replaces it. The job fails with CONFLICT when the image changed since it was listed `+
	`(its sha256 differs) and NOT_FOUND when the selection is gone or out of reach. When the image changes or is deleted, `+
	`or its source is removed, the text leaves with the image's evidence.`, sources.MaxSelectionTextBytes)

// describeSelectionForm documents the selection form's fields of
// SourceInput.
func describeSelectionForm(s *jsonschema.Schema) {
	s.Description = selectionFormDescription
	describe(s, "Selection form: the id of an image selection, as inspect source_selections listed it.", "selection_id")
	describe(s, "Selection form: the selection's sha256 as listed (64 lowercase hex digits): the image that was seen.", "sha256")
	describe(s, fmt.Sprintf("Selection form: what was seen in the image: a transcription, a description, or both (at most %d bytes).", sources.MaxSelectionTextBytes), "text")
	describe(s, fmt.Sprintf("Selection form: what produced the text, e.g. a model's name (one line, at most %d bytes).", sources.MaxModelBytes), "model")
	describe(s, "Selection form: the selection's source, checked when given.", "source_id")
	describe(s, "Selection form: the revision the selection was listed in, checked when given (a revision of its source).", "revision_id")
}
