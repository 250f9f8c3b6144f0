package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// Inspect subjects.
const (
	InspectSource           = "source"
	InspectRevisions        = "revisions"
	InspectExtractions      = "extractions"
	InspectChannels         = "channels"
	InspectCoverage         = "coverage"
	InspectSourceSelections = "source_selections"
)

// InspectRequest mirrors interfaces.InspectRequest for this package.
type InspectRequest struct {
	Subject        string
	SourceID       string
	RevisionID     string
	ExtractionID   string
	IncludeContent bool
	Cursor         string
	Limit          int
	// Path, StartLine, EndLine and Budget go with subject content
	// (ContentRequest).
	Path               string
	StartLine, EndLine int
	Budget             *Budget
	// File names the file of subject content by its absolute path, as a
	// hit's file does, instead of SourceID and Path (fileOf).
	File string
}

// Inspector answers inspect: what was indexed from a source, and why.
type Inspector struct {
	DB      *workspace.DB
	Cursors *workspace.Cursors
	// MaxContentBytes bounds the file contents one answer may carry
	// (include_content); 0 means 4 MiB.
	MaxContentBytes int64
}

const (
	defaultInspectLimit = 50
	maxInspectLimit     = 200
)

// SourceReport is the answer for subject source.
type SourceReport struct {
	Source   sources.Source   `json:"source"`
	Revision *RevisionSummary `json:"revision"`
	Files    FileCounts       `json:"files"`
}

// RevisionSummary is a revision without its file list.
type RevisionSummary struct {
	ID        string          `json:"id"`
	Number    int             `json:"number"`
	Commit    *string         `json:"commit"`
	Ref       *string         `json:"ref"`
	CreatedAt string          `json:"created_at"`
	Stats     json.RawMessage `json:"stats"`
	Current   bool            `json:"current"`
}

// FileCounts count the current revision's files by status.
type FileCounts struct {
	Indexed  int            `json:"indexed"`
	Assets   int            `json:"assets"`
	Skipped  int            `json:"skipped"`
	ByReason map[string]int `json:"skipped_by_reason"`
	Units    int            `json:"units"`
}

// Page is a paged list answer.
type Page[T any] struct {
	SourceID   string  `json:"source_id"`
	RevisionID *string `json:"revision_id,omitempty"`
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// ExtractionInfo is one extraction.
type ExtractionInfo struct {
	ID         string   `json:"id"`
	RevisionID string   `json:"revision_id"`
	Extractor  string   `json:"extractor"`
	Version    string   `json:"version"`
	Channels   []string `json:"channels"`
	Files      int      `json:"files"`
	Units      int      `json:"units"`
	CreatedAt  string   `json:"created_at"`
}

// ChannelInfo is one channel of an extraction, with how many evidence
// units of the current revision it holds.
type ChannelInfo struct {
	ExtractionID string `json:"extraction_id"`
	Channel      string `json:"channel"`
	Units        int    `json:"units"`
}

// CoverageItem is one file of the current revision: indexed, stored as an
// asset, or skipped with a reason; or a path left out by the walk.
type CoverageItem struct {
	Path       string  `json:"path"`
	Status     string  `json:"status"` // indexed, asset, skipped
	Reason     *string `json:"reason"`
	Detail     *string `json:"detail"`
	Kind       *string `json:"kind"`
	Language   *string `json:"language"`
	Size       *int64  `json:"size"`
	SHA256     *string `json:"sha256"`
	Units      int     `json:"units"`
	RevisionID *string `json:"revision_id"`
	// Content is the file's text when include_content was asked for and
	// the file on disk still has the indexed hash.
	Content *string `json:"content,omitempty"`
	Stale   *bool   `json:"stale,omitempty"`
}

// SelectionInfo is one source selection.
type SelectionInfo struct {
	ID         string  `json:"id"`
	RevisionID string  `json:"revision_id"`
	Path       string  `json:"path"`
	Selector   string  `json:"selector"`
	AssetID    *string `json:"asset_id"`
	EvidenceID *string `json:"evidence_id"`
	StartLine  *int    `json:"start_line"`
	EndLine    *int    `json:"end_line"`
	MIME       *string `json:"mime"`
	SHA256     string  `json:"sha256"`
	// Vision is the text recorded as seen in the image, null when none.
	Vision *SelectionVision `json:"vision"`
}

type inspectCursor struct {
	Offset int `json:"o"`
}

// Inspect answers req for p. Subject content is fitted to its budget by
// fit (InspectContent); the other subjects take no fitter.
func (in *Inspector) Inspect(ctx context.Context, p workspace.Principal, req InspectRequest, fit ContentFitter) (any, error) {
	if req.Subject == InspectContent {
		return in.InspectContent(ctx, p, req, fit)
	}
	if req.Path != "" || req.File != "" || req.StartLine != 0 || req.EndLine != 0 || req.Budget != nil {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "path, file, start_line, end_line and budget go with subject content")
	}
	if req.SourceID == "" {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "source_id is required")
	}
	limit := req.Limit
	if limit == 0 {
		limit = defaultInspectLimit
	}
	if limit < 0 || limit > maxInspectLimit {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "limit must be between 1 and %d", maxInspectLimit)
	}
	if req.IncludeContent && req.Subject != InspectCoverage && req.Subject != InspectRevisions {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "include_content goes with subject revisions or coverage")
	}
	src, err := in.source(ctx, p, req.SourceID)
	if err != nil {
		return nil, err
	}
	scope := fmt.Sprintf("%s|%s|%s|%s|%s|%t", workspace.ScopeKey(p), req.Subject, req.SourceID, req.RevisionID, req.ExtractionID, req.IncludeContent)
	var cur inspectCursor
	if req.Cursor != "" {
		if err := in.Cursors.Open("inspect", scope, req.Cursor, &cur); err != nil {
			return nil, err
		}
	}
	next := func(n int) (*string, error) {
		if n < limit {
			return nil, nil
		}
		c, err := in.Cursors.Seal("inspect", scope, inspectCursor{Offset: cur.Offset + limit})
		return &c, err
	}
	switch req.Subject {
	case InspectSource:
		return in.sourceReport(ctx, src)
	case InspectRevisions:
		if req.IncludeContent || req.RevisionID != "" {
			return in.revisionFiles(ctx, src, req, cur.Offset, limit, next)
		}
		return pageOf(ctx, in, src.ID, nil, cur.Offset, limit, next, in.revisions)
	case InspectExtractions:
		rev, err := in.revision(ctx, src, req.RevisionID)
		if err != nil {
			return nil, err
		}
		return pageOf(ctx, in, src.ID, &rev, cur.Offset, limit, next, in.extractions)
	case InspectChannels:
		rev, err := in.revision(ctx, src, req.RevisionID)
		if err != nil {
			return nil, err
		}
		return pageOf(ctx, in, src.ID, &rev, cur.Offset, limit, next, func(ctx context.Context, src string, rev *string, off, lim int) ([]ChannelInfo, error) {
			return in.channels(ctx, src, *rev, req.ExtractionID, off, lim)
		})
	case InspectCoverage:
		rev, err := in.revision(ctx, src, req.RevisionID)
		if err != nil {
			return nil, err
		}
		if err := currentOnly(src, rev); err != nil {
			return nil, err
		}
		return pageOf(ctx, in, src.ID, &rev, cur.Offset, limit, next, func(ctx context.Context, srcID string, _ *string, off, lim int) ([]CoverageItem, error) {
			return in.coverage(ctx, src, off, lim, req.IncludeContent)
		})
	case InspectSourceSelections:
		rev, err := in.revision(ctx, src, req.RevisionID)
		if err != nil {
			return nil, err
		}
		return pageOf(ctx, in, src.ID, &rev, cur.Offset, limit, next, in.selections)
	}
	return nil, workspace.Errorf(workspace.CodeInvalidArgument, "subject %q: use source, revisions, extractions, channels, coverage or source_selections", req.Subject)
}

func pageOf[T any](ctx context.Context, in *Inspector, srcID string, rev *string, off, limit int,
	next func(int) (*string, error), fetch func(context.Context, string, *string, int, int) ([]T, error)) (Page[T], error) {
	items, err := fetch(ctx, srcID, rev, off, limit)
	if err != nil {
		return Page[T]{}, err
	}
	if items == nil {
		items = []T{}
	}
	nc, err := next(len(items))
	if err != nil {
		return Page[T]{}, err
	}
	return Page[T]{SourceID: srcID, RevisionID: rev, Items: items, NextCursor: nc}, nil
}

// source returns the source when p may see it, NOT_FOUND otherwise.
func (in *Inspector) source(ctx context.Context, p workspace.Principal, id string) (sources.Source, error) {
	src, err := sources.GetSource(ctx, in.DB, id)
	if workspace.ErrorCode(err) == workspace.CodeNotFound || (err == nil && !p.CanSee(src.CollectionID)) {
		return sources.Source{}, workspace.Errorf(workspace.CodeNotFound, "no source with that id")
	}
	return src, err
}

// revision resolves a revision id of src ("" is the current one).
func (in *Inspector) revision(ctx context.Context, src sources.Source, id string) (string, error) {
	if id == "" {
		if src.CurrentRevisionID == nil {
			return "", workspace.Errorf(workspace.CodeNotFound, "the source has no revision yet (its first sync has not finished)")
		}
		return *src.CurrentRevisionID, nil
	}
	var n int
	err := in.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM revisions WHERE id = ? AND source_id = ?`, id, src.ID).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	if n == 0 {
		return "", workspace.Errorf(workspace.CodeNotFound, "no revision with that id in this source")
	}
	return id, nil
}

func (in *Inspector) sourceReport(ctx context.Context, src sources.Source) (SourceReport, error) {
	rep := SourceReport{Source: src, Files: FileCounts{ByReason: map[string]int{}}}
	if src.CurrentRevisionID != nil {
		revs, err := in.revisions(ctx, src.ID, nil, 0, 1)
		if err != nil {
			return rep, err
		}
		if len(revs) > 0 {
			rep.Revision = &revs[0]
		}
	}
	rows, err := in.DB.R.QueryContext(ctx, `SELECT status, COALESCE(skip_reason, ''), count(*), COALESCE(SUM(units), 0)
		FROM files WHERE source_id = ? GROUP BY status, skip_reason`, src.ID)
	if err != nil {
		return rep, fmt.Errorf("inspect source: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status, reason string
		var n, units int
		if err := rows.Scan(&status, &reason, &n, &units); err != nil {
			return rep, fmt.Errorf("inspect source: %w", err)
		}
		rep.Files.Units += units
		switch status {
		case "indexed":
			rep.Files.Indexed += n
		case "asset":
			rep.Files.Assets += n
		default:
			rep.Files.Skipped += n
			rep.Files.ByReason[reason] += n
		}
	}
	if err := rows.Err(); err != nil {
		return rep, err
	}
	// Paths the walk left out (ignored, excluded, symlink escapes ...)
	// have no files row; count them from the skips table.
	srows, err := in.DB.R.QueryContext(ctx, `SELECT reason, count(*) FROM skips WHERE source_id = ?
		AND path NOT IN (SELECT path FROM files WHERE source_id = ? AND status = 'skipped') GROUP BY reason`, src.ID, src.ID)
	if err != nil {
		return rep, fmt.Errorf("inspect source: %w", err)
	}
	defer srows.Close()
	for srows.Next() {
		var reason string
		var n int
		if err := srows.Scan(&reason, &n); err != nil {
			return rep, err
		}
		rep.Files.Skipped += n
		rep.Files.ByReason[reason] += n
	}
	return rep, srows.Err()
}

func (in *Inspector) revisions(ctx context.Context, srcID string, _ *string, off, limit int) ([]RevisionSummary, error) {
	var current sql.NullString
	if err := in.DB.R.QueryRowContext(ctx, `SELECT current_revision_id FROM sources WHERE id = ?`, srcID).Scan(&current); err != nil {
		return nil, fmt.Errorf("inspect revisions: %w", err)
	}
	rows, err := in.DB.R.QueryContext(ctx, `SELECT id, number, git_commit, git_ref, created_at, stats FROM revisions
		WHERE source_id = ? ORDER BY number DESC LIMIT ? OFFSET ?`, srcID, limit, off)
	if err != nil {
		return nil, fmt.Errorf("inspect revisions: %w", err)
	}
	defer rows.Close()
	var out []RevisionSummary
	for rows.Next() {
		var r RevisionSummary
		var stats string
		if err := rows.Scan(&r.ID, &r.Number, &r.Commit, &r.Ref, &r.CreatedAt, &stats); err != nil {
			return nil, fmt.Errorf("inspect revisions: %w", err)
		}
		r.Stats = json.RawMessage(stats)
		r.Current = current.Valid && current.String == r.ID
		out = append(out, r)
	}
	return out, rows.Err()
}

func (in *Inspector) extractions(ctx context.Context, srcID string, rev *string, off, limit int) ([]ExtractionInfo, error) {
	rows, err := in.DB.R.QueryContext(ctx, `SELECT id, revision_id, extractor, version, channels, files, units, created_at
		FROM extractions WHERE source_id = ? AND revision_id = ? ORDER BY extractor, version LIMIT ? OFFSET ?`, srcID, *rev, limit, off)
	if err != nil {
		return nil, fmt.Errorf("inspect extractions: %w", err)
	}
	defer rows.Close()
	var out []ExtractionInfo
	for rows.Next() {
		var e ExtractionInfo
		var ch string
		if err := rows.Scan(&e.ID, &e.RevisionID, &e.Extractor, &e.Version, &ch, &e.Files, &e.Units, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("inspect extractions: %w", err)
		}
		_ = json.Unmarshal([]byte(ch), &e.Channels)
		if e.Channels == nil {
			e.Channels = []string{}
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// channels lists the channels of the revision's extractions (or of one),
// counting the evidence units each holds now.
func (in *Inspector) channels(ctx context.Context, srcID, rev, extraction string, off, limit int) ([]ChannelInfo, error) {
	if extraction != "" {
		var n int
		if err := in.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM extractions WHERE id = ? AND source_id = ?`, extraction, srcID).Scan(&n); err != nil {
			return nil, fmt.Errorf("inspect channels: %w", err)
		}
		if n == 0 {
			return nil, workspace.Errorf(workspace.CodeNotFound, "no extraction with that id in this source")
		}
	}
	rows, err := in.DB.R.QueryContext(ctx, `SELECT x.id, c.value,
		(SELECT count(*) FROM evidence e WHERE e.extraction_id = x.id AND e.channel = c.value)
		FROM extractions x, json_each(x.channels) c
		WHERE x.source_id = ? AND (x.revision_id = ? OR x.id = ?) AND (? = '' OR x.id = ?)
		ORDER BY x.id, c.value LIMIT ? OFFSET ?`, srcID, rev, extraction, extraction, extraction, limit, off)
	if err != nil {
		return nil, fmt.Errorf("inspect channels: %w", err)
	}
	defer rows.Close()
	var out []ChannelInfo
	for rows.Next() {
		var c ChannelInfo
		if err := rows.Scan(&c.ExtractionID, &c.Channel, &c.Units); err != nil {
			return nil, fmt.Errorf("inspect channels: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// currentOnly refuses rev unless it is src's current revision: the file
// list, coverage and content are kept for the current revision only (an
// earlier one keeps its counts, in its stats), and answering with today's
// files under an old revision's id would be wrong.
func currentOnly(src sources.Source, rev string) error {
	if src.CurrentRevisionID == nil || rev != *src.CurrentRevisionID {
		return workspace.Errorf(workspace.CodeInvalidArgument,
			"files, coverage and content are kept for the current revision only; an earlier revision's counts are in subject revisions")
	}
	return nil
}

// coverage lists every path of the current revision: the files (indexed,
// assets, skipped for their content) and the paths the walk left out.
func (in *Inspector) coverage(ctx context.Context, src sources.Source, off, limit int, content bool) ([]CoverageItem, error) {
	rows, err := in.DB.R.QueryContext(ctx, `SELECT path, status, reason, detail, kind, language, size, sha256, units, revision_id FROM (
			SELECT path, status, skip_reason AS reason, skip_detail AS detail, kind, language, size, sha256, units, revision_id
			FROM files WHERE source_id = ?
			UNION ALL
			SELECT path, 'skipped', reason, detail, NULL, NULL, NULL, NULL, 0, revision_id
			FROM skips s WHERE source_id = ? AND NOT EXISTS (SELECT 1 FROM files f WHERE f.source_id = s.source_id AND f.path = s.path)
		) ORDER BY path LIMIT ? OFFSET ?`, src.ID, src.ID, limit, off)
	if err != nil {
		return nil, fmt.Errorf("inspect coverage: %w", err)
	}
	defer rows.Close()
	var out []CoverageItem
	for rows.Next() {
		var c CoverageItem
		if err := rows.Scan(&c.Path, &c.Status, &c.Reason, &c.Detail, &c.Kind, &c.Language, &c.Size, &c.SHA256, &c.Units, &c.RevisionID); err != nil {
			return nil, fmt.Errorf("inspect coverage: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if content {
		if err := in.attachContent(src, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// revisionFiles answers subject revisions for one revision: its summary
// is the first page's context, and the files (with content when asked).
func (in *Inspector) revisionFiles(ctx context.Context, src sources.Source, req InspectRequest, off, limit int, next func(int) (*string, error)) (Page[CoverageItem], error) {
	rev, err := in.revision(ctx, src, req.RevisionID)
	if err != nil {
		return Page[CoverageItem]{}, err
	}
	if err := currentOnly(src, rev); err != nil {
		return Page[CoverageItem]{}, err
	}
	items, err := in.coverage(ctx, src, off, limit, req.IncludeContent)
	if err != nil {
		return Page[CoverageItem]{}, err
	}
	if items == nil {
		items = []CoverageItem{}
	}
	nc, err := next(len(items))
	if err != nil {
		return Page[CoverageItem]{}, err
	}
	return Page[CoverageItem]{SourceID: src.ID, RevisionID: &rev, Items: items, NextCursor: nc}, nil
}

// attachContent reads indexed text files from disk, keeping only those
// whose bytes still hash to the indexed sha256 (others are marked stale).
// It refuses with OUTPUT_BUDGET_EXCEEDED past MaxContentBytes.
func (in *Inspector) attachContent(src sources.Source, items []CoverageItem) error {
	maxBytes := in.MaxContentBytes
	if maxBytes <= 0 {
		maxBytes = 4 << 20
	}
	var total int64
	for i := range items {
		c := &items[i]
		if c.Status != "indexed" || c.SHA256 == nil {
			continue
		}
		full := src.Path
		if src.Kind != sources.KindFile {
			full = filepath.Join(src.Path, filepath.FromSlash(c.Path))
		}
		b, err := os.ReadFile(full)
		stale := err != nil
		if err == nil {
			sum := sha256.Sum256(b)
			stale = hex.EncodeToString(sum[:]) != *c.SHA256
		}
		if stale || !utf8.Valid(b) {
			t := true
			c.Stale = &t
			continue
		}
		total += int64(len(b))
		if total > maxBytes {
			return workspace.Errorf(workspace.CodeOutputBudgetExceeded, "the content of this page is over %d bytes: ask for a smaller limit", maxBytes)
		}
		s := string(b)
		c.Content = &s
		f := false
		c.Stale = &f
	}
	return nil
}
