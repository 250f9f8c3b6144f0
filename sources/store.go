package sources

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Source is a registered file, folder or repository.
type Source struct {
	ID                string     `json:"id"`
	Kind              Kind       `json:"kind"`
	Path              string     `json:"path"`
	CollectionID      string     `json:"collection_id"`
	Name              string     `json:"name"`
	Include           []string   `json:"include"`
	Exclude           []string   `json:"exclude"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	CurrentRevisionID *string    `json:"current_revision_id"`
	LastSyncedAt      *time.Time `json:"last_synced_at"`
	// Watch is false when the source opted out of watching.
	Watch bool `json:"watch"`
}

// timeFormat is how times are stored: RFC 3339 in UTC with nanoseconds.
const timeFormat = time.RFC3339Nano

func now() string { return time.Now().UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// newID returns prefix followed by 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func jsonStrings(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

// CreateSource registers a resolved source. Adding a path that is already
// a source of the same collection returns that source, updated with the
// new name, kind and globs, and created == false: the caller syncs it.
func CreateSource(ctx context.Context, db *workspace.DB, rs ResolvedSource) (src Source, created bool, err error) {
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	defer tx.Rollback()
	ts := now()
	var id string
	err = tx.QueryRowContext(ctx, `SELECT id FROM sources WHERE collection_id = ? AND path = ?`, rs.CollectionID, rs.Path).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := checkOverlap(ctx, tx, rs); err != nil {
			return Source{}, false, err
		}
		id = newID("src_")
		created = true
		_, err = tx.ExecContext(ctx, `INSERT INTO sources(id, kind, path, collection_id, name, include_globs, exclude_globs, created_at, updated_at, watch)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, string(rs.Kind), rs.Path, rs.CollectionID, rs.Name, jsonStrings(rs.Include), jsonStrings(rs.Exclude), ts, ts, rs.Watch == nil || *rs.Watch)
	case err == nil:
		_, err = tx.ExecContext(ctx, `UPDATE sources SET kind = ?, name = ?, include_globs = ?, exclude_globs = ?, updated_at = ?,
			watch = COALESCE(?, watch) WHERE id = ?`,
			string(rs.Kind), rs.Name, jsonStrings(rs.Include), jsonStrings(rs.Exclude), ts, rs.Watch, id)
	}
	if err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	src, err = getSource(ctx, tx, id)
	if err != nil {
		return Source{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	return src, created, nil
}

// checkOverlap refuses a new source that lies inside, or holds, another
// source of the same collection: its files would be indexed twice and
// every hit on them found twice (docs/ingest.md, "Overlapping sources").
func checkOverlap(ctx context.Context, tx *sql.Tx, rs ResolvedSource) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, path FROM sources WHERE collection_id = ? AND path <> ? ORDER BY path`, rs.CollectionID, rs.Path)
	if err != nil {
		return fmt.Errorf("create source: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, name, path string
		if err := rows.Scan(&id, &name, &path); err != nil {
			return fmt.Errorf("create source: %w", err)
		}
		switch {
		case within(rs.Path, path):
			return workspace.Errorf(workspace.CodeConflict,
				"%s lies inside source %s (%q, %s) of collection %q: its files are indexed already; sync that source, or remove it first (tychora sources remove %s)",
				rs.Path, id, name, path, rs.CollectionID, id)
		case within(path, rs.Path):
			return workspace.Errorf(workspace.CodeConflict,
				"%s holds source %s (%q, %s) of collection %q: its files would be indexed twice; remove that source first (tychora sources remove %s), or add to another collection",
				rs.Path, id, name, path, rs.CollectionID, id)
		}
	}
	return rows.Err()
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const sourceColumns = `id, kind, path, collection_id, name, include_globs, exclude_globs, created_at, updated_at, current_revision_id, last_synced_at, watch`

type scanner interface{ Scan(dest ...any) error }

func scanSource(s scanner) (Source, error) {
	var src Source
	var kind, inc, exc, created, updated string
	var synced *string
	if err := s.Scan(&src.ID, &kind, &src.Path, &src.CollectionID, &src.Name, &inc, &exc, &created, &updated,
		&src.CurrentRevisionID, &synced, &src.Watch); err != nil {
		return Source{}, err
	}
	if synced != nil {
		t := parseTime(*synced)
		src.LastSyncedAt = &t
	}
	src.Kind = Kind(kind)
	_ = json.Unmarshal([]byte(inc), &src.Include)
	_ = json.Unmarshal([]byte(exc), &src.Exclude)
	src.CreatedAt = parseTime(created)
	src.UpdatedAt = parseTime(updated)
	return src, nil
}

func getSource(ctx context.Context, q queryer, id string) (Source, error) {
	src, err := scanSource(q.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Source{}, workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("source %q not found", id))
	}
	if err != nil {
		return Source{}, fmt.Errorf("get source: %w", err)
	}
	return src, nil
}

// GetSource returns the source with id, or NOT_FOUND. The caller checks the
// source's collection against the caller's scope.
func GetSource(ctx context.Context, db *workspace.DB, id string) (Source, error) {
	return getSource(ctx, db.R, id)
}

// ListSources returns the sources of the given collections (nil: all),
// ordered by creation.
func ListSources(ctx context.Context, db *workspace.DB, collections []string) ([]Source, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		src, err := scanSource(rows)
		if err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		if collections != nil && !slices.Contains(collections, src.CollectionID) {
			continue
		}
		out = append(out, src)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return out, nil
}

// RemoveSource deletes a source and everything indexed from it, in one
// transaction: its evidence (which leaves the FTS index through the
// triggers), revisions, files, coverage and selections, and the rows of
// the assets that no other source holds. Their payload files are left to
// SweepAssets when the next owner opens the workspace, when no sync is
// storing a payload of the same content.
func RemoveSource(ctx context.Context, db *workspace.DB, id string) error {
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	defer tx.Rollback()
	// The assets it holds, before the cascade takes its files and
	// selections.
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS removed_assets(id TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM removed_assets`); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO removed_assets(id)
		SELECT asset_id FROM files WHERE source_id = ? AND asset_id IS NOT NULL
		UNION SELECT asset_id FROM source_selections WHERE source_id = ? AND asset_id IS NOT NULL`, id, id); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	// evidence has no foreign key (see the migration): delete it first.
	res, err := tx.ExecContext(ctx, `DELETE FROM evidence WHERE source_id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		if err := addChurn(ctx, tx, n); err != nil {
			return fmt.Errorf("remove source: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, roleRulesKey(id)); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	res, err = tx.ExecContext(ctx, `DELETE FROM sources WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return workspace.Errorf(workspace.CodeNotFound, "source %q not found", id)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM assets WHERE id IN (SELECT id FROM removed_assets)
		AND NOT EXISTS (SELECT 1 FROM files f WHERE f.asset_id = assets.id)
		AND NOT EXISTS (SELECT 1 FROM source_selections x WHERE x.asset_id = assets.id)`); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM removed_assets`); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	return nil
}

// roleRulesKey is the meta key of the RoleRules a source's roles were
// last found by, in full (a sync that looked at every file).
func roleRulesKey(sourceID string) string { return "role_rules/" + sourceID }

// roleRulesOutdated reports whether the roles of a source's files may
// have been found by older rules than RoleRules: its recorded version is
// older, or none was recorded (a source indexed before versions were,
// or never synced).
func roleRulesOutdated(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, sourceID string) (bool, error) {
	var v string
	switch err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, roleRulesKey(sourceID)).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil
	case err != nil:
		return false, err
	}
	n, err := strconv.Atoi(v)
	return err != nil || n < RoleRules, nil
}

// fileState is a row of files as the current revision left it.
type fileState struct {
	size      int64
	mtimeNs   int64
	sha       string
	status    string
	reason    string
	detail    string
	language  string
	role      string // "" when not detected: skipped, or indexed before roles were
	extractor string // name@version of the extraction that made its evidence
	noTerms   bool   // no file terms: indexed before they were kept
}

// roleMissing reports an indexed file or image that has no role: it was
// indexed before roles were recorded (migration 0009), so the next sync
// reads it again and detects its role.
func (f *fileState) roleMissing() bool {
	return f.role == "" && (f.status == statusIndexed || f.status == statusAsset)
}

// termsMissing reports an indexed file or image without file terms
// (file_terms.go): indexed before they were kept (migration 0012), it is
// read again by the next sync.
func (f *fileState) termsMissing() bool {
	return f.noTerms && (f.status == statusIndexed || f.status == statusAsset)
}

// verdictChanged reports whether an unchanged file would now get another
// verdict: a text file skipped as too large that fits max_file_bytes now
// (or an indexed one that no longer does), or an indexed file that can no
// longer be read (chmod changes neither size nor modified time). Such a
// file is read again.
func (f *fileState) verdictChanged(w walkFile, maxText int64) bool {
	switch {
	case f.status == statusSkipped && f.reason == SkipTooLarge:
		return w.size <= maxText
	case f.status == statusIndexed:
		return w.size > maxText || !canRead(w.abs)
	}
	return false
}

// canRead reports whether this process may read the file at path, without
// opening it (a variable for tests: root reads everything).
var canRead = func(path string) bool { return syscall.Access(path, 4 /* R_OK */) == nil }

// staleExtraction reports whether an indexed text file was extracted by
// another extractor, or another version, than the one that would run now:
// an upgrade re-extracts unchanged files.
func (f *fileState) staleExtraction(rel string) bool {
	if f.status != statusIndexed || f.extractor == "" {
		return false
	}
	ex := ExtractorFor(rel, f.language)
	return ex == nil || ex.Name()+"@"+ex.Version() != f.extractor
}

// fileStateColumns are the columns of a fileState, from files f joined
// with the extractions e that made its evidence.
const fileStateColumns = `f.size, f.mtime_ns, f.sha256, f.status, f.skip_reason, f.skip_detail,
		f.language, f.role, e.extractor || '@' || e.version,
		NOT EXISTS (SELECT 1 FROM file_terms t WHERE t.source_id = f.source_id AND t.path = f.path)`

// scanFileState scans the file's path into path and fileStateColumns.
func scanFileState(s scanner, path *string) (*fileState, error) {
	var sha, reason, detail, lang, role, extractor sql.NullString
	f := &fileState{}
	if err := s.Scan(path, &f.size, &f.mtimeNs, &sha, &f.status, &reason, &detail, &lang, &role, &extractor, &f.noTerms); err != nil {
		return nil, err
	}
	f.sha, f.reason, f.detail = sha.String, reason.String, detail.String
	f.language, f.role, f.extractor = lang.String, role.String, extractor.String
	return f, nil
}

// baseState is what the current revision holds, read in one transaction.
type baseState struct {
	// rolesOutdated: the source's files had their roles found by older
	// rules than RoleRules (roleRulesOutdated).
	rolesOutdated bool
	revisionID    *string
	number        int
	commit        string
	ref           string
	coverage      string
	files         map[string]*fileState
}

func (ix *Indexer) loadState(ctx context.Context, sourceID string) (baseState, error) {
	st := baseState{files: map[string]*fileState{}}
	tx, err := ix.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return st, fmt.Errorf("load state: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT current_revision_id FROM sources WHERE id = ?`, sourceID).Scan(&st.revisionID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return st, workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("source %q not found", sourceID))
		}
		return st, fmt.Errorf("load state: %w", err)
	}
	if st.rolesOutdated, err = roleRulesOutdated(ctx, tx, sourceID); err != nil {
		return st, fmt.Errorf("load state: %w", err)
	}
	if st.revisionID != nil {
		var commit, ref sql.NullString
		var stats string
		if err := tx.QueryRowContext(ctx, `SELECT number, git_commit, git_ref, stats FROM revisions WHERE id = ?`, *st.revisionID).
			Scan(&st.number, &commit, &ref, &stats); err != nil {
			return st, fmt.Errorf("load state: %w", err)
		}
		st.commit, st.ref = commit.String, ref.String
		var s struct {
			Coverage string `json:"coverage_sha256"`
		}
		_ = json.Unmarshal([]byte(stats), &s)
		st.coverage = s.Coverage
	}
	rows, err := tx.QueryContext(ctx, `SELECT f.path, `+fileStateColumns+`
		FROM files f LEFT JOIN extractions e ON e.id = f.extraction_id WHERE f.source_id = ?`, sourceID)
	if err != nil {
		return st, fmt.Errorf("load state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var path string
		f, err := scanFileState(rows, &path)
		if err != nil {
			return st, fmt.Errorf("load state: %w", err)
		}
		st.files[path] = f
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("load state: %w", err)
	}
	return st, nil
}

// buildRows turns units into rows: parents fixed up when an extractor got
// them wrong (a parent must come before its child), leaves marked, IDs and
// code terms computed.
func buildRows(sourceID, rel string, units []Unit) []evRow {
	parents := make([]int, len(units))
	hasChild := make([]bool, len(units))
	for i, u := range units {
		pi := u.Parent
		if i == 0 {
			pi = -1
		} else if pi < 0 || pi >= i {
			pi = 0
		}
		parents[i] = pi
		if pi >= 0 {
			hasChild[pi] = true
		}
	}
	ids := newIDMaker(sourceID, rel)
	rows := make([]evRow, len(units))
	for i, u := range units {
		if i == 0 {
			u.Level = LevelDocument
		} else if u.Level != LevelSection && u.Level != LevelChunk {
			u.Level = LevelChunk
		}
		if u.Channel == "" {
			u.Channel = ChannelText
		}
		parentID := ""
		if parents[i] >= 0 {
			parentID = rows[parents[i]].id
		}
		leaf := !hasChild[i]
		terms := ""
		if leaf {
			terms = CodeTerms(u.Title + "\n" + u.Text + "\n" + rel)
		}
		rows[i] = ids.row(u, i, parentID, leaf, encodeHeading(u.HeadingPath), terms)
	}
	return rows
}

func channelsOf(rows []evRow) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.channel) {
			out = append(out, r.channel)
		}
	}
	sort.Strings(out)
	return out
}

// encodeHeading renders a heading path as a JSON array without HTML
// escaping, so that the FTS column indexes the headings' own characters.
func encodeHeading(hp []string) string {
	if len(hp) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(hp)
	return strings.TrimSuffix(b.String(), "\n")
}

// idMaker derives stable evidence IDs: a hash of the source, the file's
// path, the unit's level, heading path, title and text hash, and how many
// earlier units of the file share all of those. The same content at the
// same path gets the same IDs in every sync, and an edit elsewhere in the
// file leaves a unit's ID alone.
type idMaker struct {
	prefix string
	seen   map[[32]byte]int
}

func newIDMaker(sourceID, rel string) *idMaker {
	return &idMaker{prefix: sourceID + "\x00" + rel + "\x00"}
}

func (m *idMaker) row(u Unit, ordinal int, parentID string, leaf bool, heading, terms string) evRow {
	textSum := sha256.Sum256([]byte(u.Text))
	h := sha256.New()
	io.WriteString(h, m.prefix)
	io.WriteString(h, u.Level)
	h.Write([]byte{0})
	io.WriteString(h, heading)
	h.Write([]byte{0})
	io.WriteString(h, u.Title)
	h.Write([]byte{0})
	h.Write(textSum[:])
	var key [32]byte
	h.Sum(key[:0])
	if m.seen == nil {
		m.seen = map[[32]byte]int{}
	}
	occ := m.seen[key]
	m.seen[key] = occ + 1
	if occ > 0 {
		h.Write([]byte{0, byte(occ >> 24), byte(occ >> 16), byte(occ >> 8), byte(occ)})
		h.Sum(key[:0])
	}
	return evRow{
		id:        "ev_" + hex.EncodeToString(key[:12]),
		parentID:  parentID,
		ordinal:   ordinal,
		level:     u.Level,
		leaf:      leaf,
		title:     u.Title,
		heading:   heading,
		startLine: u.StartLine,
		endLine:   u.EndLine,
		channel:   u.Channel,
		sha:       hex.EncodeToString(textSum[:]),
		text:      u.Text,
		codeTerms: terms,
		tokens:    EstimateTokens(u.Text),
	}
}
