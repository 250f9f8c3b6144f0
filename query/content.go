package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// InspectContent is the inspect subject that returns the indexed lines of
// one file (docs/search.md, "Whole files and ranges").
const InspectContent = "content"

// MaxContentLine bounds start_line and end_line.
const MaxContentLine = 1 << 30

// ContentRequest asks for the indexed lines of one file of a source.
type ContentRequest struct {
	SourceID string
	Path     string
	// StartLine and EndLine bound the lines, 1-based and inclusive; 0 is
	// the file's first and last line.
	StartLine, EndLine int
	// Cursor continues an earlier answer (its next_cursor).
	Cursor string
}

// FileContent is the answer of inspect content: lines of the file as the
// current revision indexed them.
type FileContent struct {
	SourceID   string `json:"source_id"`
	RevisionID string `json:"revision_id"`
	Path       string `json:"path"`
	// File is the file's absolute path on disk.
	File     string `json:"file"`
	Kind     string `json:"kind"`
	Language string `json:"language"`
	// Lines is how many lines the indexed file has.
	Lines int `json:"lines"`
	// StartLine and EndLine are the lines Text holds (EndLine is
	// StartLine-1 when it holds none).
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Text      string `json:"text"`
	// Hash is the sha256 (hex) of the indexed file.
	Hash string `json:"hash"`
	// Stale is true when the file on disk no longer has the indexed bytes:
	// Text is still what was indexed.
	Stale bool `json:"stale"`
	// Truncated is true when the budget left out lines of the range asked
	// for; next_cursor continues from the first of them.
	Truncated  bool           `json:"truncated"`
	Budget     *ContentBudget `json:"budget"`
	NextCursor *string        `json:"next_cursor"`
}

// ContentBudget says how the answer was sized: used_tokens counts the
// structuredContent JSON exactly, this number included.
type ContentBudget struct {
	MaxTokens  int    `json:"max_tokens"`
	UsedTokens int    `json:"used_tokens"`
	Counter    string `json:"counter"`
}

// contentCursor resumes a content answer at line Next of the range that
// ends at End.
type contentCursor struct {
	Next int `json:"n"`
	End  int `json:"e"`
}

// FileLines is the indexed file of a content request: every line of it,
// and the range asked for.
type FileLines struct {
	FileContent
	// All holds every line of the file, each with its "\n" (the last maybe
	// without); the answer's lines are All[StartLine-1 : End].
	All []string
	// End is the last line of the range asked for.
	End int
	// scope binds the cursors of this request.
	scope string
}

// Content returns the indexed file that req names, with the range asked
// for resolved (FileLines.StartLine to FileLines.End), for the caller to
// fit to a budget. An unknown source, one outside p's collections, or a
// path the current revision did not index is NOT_FOUND; a range that
// starts past the end is INVALID_ARGUMENT (one that ends past it ends at
// the last line).
func (in *Inspector) Content(ctx context.Context, p workspace.Principal, req ContentRequest) (FileLines, error) {
	if req.SourceID == "" {
		return FileLines{}, workspace.Errorf(workspace.CodeInvalidArgument, "source_id is required")
	}
	if req.Path == "" {
		return FileLines{}, workspace.Errorf(workspace.CodeInvalidArgument, "path is required with subject content")
	}
	if req.StartLine < 0 || req.EndLine < 0 || req.StartLine > MaxContentLine || req.EndLine > MaxContentLine ||
		(req.EndLine > 0 && req.EndLine < req.StartLine) {
		return FileLines{}, workspace.Errorf(workspace.CodeInvalidArgument, "start_line and end_line must be 1 to %d, start_line ≤ end_line", MaxContentLine)
	}
	src, err := in.source(ctx, p, req.SourceID)
	if err != nil {
		return FileLines{}, err
	}
	fl := FileLines{FileContent: FileContent{SourceID: src.ID, Path: req.Path}}
	var fsha sql.NullString
	var f FileState
	err = in.DB.R.QueryRowContext(ctx, `SELECT f.revision_id, COALESCE(f.kind, ''), COALESCE(f.language, ''), f.sha256, f.size, f.mtime_ns
		FROM files f WHERE f.source_id = ? AND f.path = ? AND f.status = 'indexed'`, src.ID, req.Path).
		Scan(&fl.RevisionID, &fl.Kind, &fl.Language, &fsha, &f.Size, &f.MtimeNs)
	if errors.Is(err, sql.ErrNoRows) {
		return FileLines{}, workspace.Errorf(workspace.CodeNotFound, "the source's current revision indexed no file at that path")
	}
	if err != nil {
		return FileLines{}, fmt.Errorf("inspect content: %w", err)
	}
	f.SourcePath, f.SourceKind, f.Path, f.SHA256 = src.Path, string(src.Kind), req.Path, fsha.String
	fl.File, fl.Hash, fl.Stale = f.abs(), fsha.String, IsStale(f)
	if fl.All, err = indexedLines(ctx, in.DB.R, src.ID, req.Path); err != nil {
		return FileLines{}, err
	}
	fl.Lines = len(fl.All)
	start, end := max(req.StartLine, 1), req.EndLine
	if end == 0 || end > fl.Lines {
		end = fl.Lines
	}
	fl.scope = fmt.Sprintf("%s|content|%s|%s|%d|%d", workspace.ScopeKey(p), src.ID, req.Path, req.StartLine, req.EndLine)
	if req.Cursor != "" {
		var cur contentCursor
		if err := in.Cursors.Open("inspect", fl.scope, req.Cursor, &cur); err != nil {
			return FileLines{}, err
		}
		start, end = cur.Next, min(cur.End, fl.Lines)
	}
	if start > fl.Lines && !(fl.Lines == 0 && start == 1) {
		return FileLines{}, workspace.Errorf(workspace.CodeInvalidArgument, "start_line %d is past the end of the file (%d lines)", start, fl.Lines)
	}
	fl.StartLine, fl.EndLine, fl.End = start, end, end
	return fl, nil
}

// Answer is the answer holding the first n lines of the range (n ≤
// End-StartLine+1); next is its next_cursor (ContentCursor), nil when it
// holds the rest of the range.
func (fl *FileLines) Answer(n int, budget ContentBudget, next *string) FileContent {
	out := fl.FileContent
	out.EndLine = out.StartLine + n - 1
	out.Text = strings.Join(fl.All[out.StartLine-1:max(out.EndLine, out.StartLine-1)], "")
	out.Budget = &budget
	out.Truncated = out.EndLine < fl.End
	out.NextCursor = next
	return out
}

// Rest is how many lines of the range asked for remain from StartLine.
func (fl *FileLines) Rest() int { return max(0, fl.End-fl.StartLine+1) }

// ContentCursor is the next_cursor of an answer that stops before line
// next of the range fl resolved.
func (in *Inspector) ContentCursor(fl *FileLines, next int) (string, error) {
	return in.Cursors.Seal("inspect", fl.scope, contentCursor{Next: next, End: fl.End})
}

// indexedLines rebuilds the lines of a file as its current revision
// indexed them, from its leaf units: for the verbatim kinds a leaf's text
// is exactly its lines, the leaves cover every non-blank line once, and a
// long line comes as windows of that one line (docs/extraction.md). Lines
// no leaf covers are blank. The document unit's span gives the line
// count.
func indexedLines(ctx context.Context, db *sql.DB, sourceID, path string) ([]string, error) {
	// Text seen in an image (kind vision) is not the file's lines.
	rows, err := db.QueryContext(ctx, `SELECT level, leaf, start_line, end_line, text FROM evidence
		WHERE source_id = ? AND path = ? AND kind != ? ORDER BY ordinal`, sourceID, path, sources.KindVision)
	if err != nil {
		return nil, fmt.Errorf("inspect content: %w", err)
	}
	defer rows.Close()
	var lines []string
	grow := func(n int) {
		for len(lines) < n {
			lines = append(lines, "")
		}
	}
	lastWindow := 0 // the line the last one-line leaf filled
	for rows.Next() {
		var level, text string
		var leaf, start, end int
		if err := rows.Scan(&level, &leaf, &start, &end, &text); err != nil {
			return nil, fmt.Errorf("inspect content: %w", err)
		}
		if level == string(sources.LevelDocument) {
			grow(end)
		}
		if leaf == 0 || start < 1 || end < start {
			continue
		}
		grow(end)
		if start == end && lastWindow == start {
			lines[start-1] += text // the next window of a long line
			continue
		}
		for i, l := range strings.Split(text, "\n") {
			if start+i > end {
				break
			}
			lines[start-1+i] = l
		}
		lastWindow = 0
		if start == end {
			lastWindow = start
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("inspect content: %w", err)
	}
	for i := range lines {
		if i < len(lines)-1 {
			lines[i] += "\n"
		}
	}
	if n := len(lines); n > 0 {
		lines[n-1] += "\n"
	}
	return lines, nil
}

// DocumentText is the indexed text of the file a document unit stands
// for: its lines joined, each ending in "\n".
func DocumentText(ctx context.Context, db *sql.DB, sourceID, path string) (string, error) {
	lines, err := indexedLines(ctx, db, sourceID, path)
	if err != nil {
		return "", err
	}
	return strings.Join(lines, ""), nil
}
