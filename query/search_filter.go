package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// scopeFilter is what a search may see: the caller's collections and the
// request's filters, resolved.
type scopeFilter struct {
	collections []string // nil: every collection
	sources     []string
	kinds       []string
	languages   []string
	roles       []string
	exclude     []string // roles left out
	facets      map[string]string
	pathKeys    []string // "source\x00path" of the files the path globs allow; nil: no path filter
	// none is true when nothing can match (the caller sees no collection,
	// or the path globs match no file).
	none bool
}

// sql returns the filter as " AND cond AND cond ..." over the evidence
// table (alias e), to follow a started WHERE clause, with its arguments.
func (sf *scopeFilter) sql() (string, []any) {
	var conds []string
	var args []any
	in := func(col string, vals []string) {
		conds = append(conds, col+" IN "+placeholders(len(vals)))
		args = append(args, anyStrings(vals)...)
	}
	if sf.collections != nil {
		in("e.collection_id", sf.collections)
	}
	if len(sf.sources) > 0 {
		in("e.source_id", sf.sources)
	}
	if len(sf.kinds) > 0 {
		in("e.kind", sf.kinds)
	}
	if len(sf.languages) > 0 {
		in("e.language", sf.languages)
	}
	if len(sf.roles) > 0 {
		in("e.role", sf.roles)
	}
	if len(sf.exclude) > 0 {
		conds = append(conds, "e.role NOT IN "+placeholders(len(sf.exclude)))
		args = append(args, anyStrings(sf.exclude)...)
	}
	for _, k := range sortedKeys(sf.facets) {
		conds = append(conds, `EXISTS (SELECT 1 FROM files fi WHERE fi.source_id = e.source_id AND fi.path = e.path
			AND json_extract(fi.facets, '$."' || ? || '"') = ?)`)
		args = append(args, k, sf.facets[k])
	}
	if sf.pathKeys != nil {
		b, _ := json.Marshal(sf.pathKeys)
		conds = append(conds, `(e.source_id || char(0) || e.path) IN (SELECT value FROM json_each(?))`)
		args = append(args, string(b))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// narrows reports whether the filter narrows the search at all.
func (sf *scopeFilter) narrows() bool {
	return sf.collections != nil || len(sf.sources) > 0 || len(sf.kinds) > 0 ||
		len(sf.languages) > 0 || len(sf.roles) > 0 || len(sf.exclude) > 0 || len(sf.facets) > 0 || sf.pathKeys != nil
}

func placeholders(n int) string {
	return "(?" + strings.Repeat(",?", n-1) + ")"
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// resolveScope turns the caller's grant and the normalized filters into
// SQL. Naming a collection outside the grant is PERMISSION_DENIED; naming
// a collection the workspace does not have (when known), or a source that
// does not exist or lies outside the caller's collections, is NOT_FOUND
// (the two cannot be told apart).
func (e *Engine) resolveScope(ctx context.Context, tx *sql.Tx, p workspace.Principal, f *Filters) (scopeFilter, error) {
	var sf scopeFilter
	var cols []string // nil: every collection
	if !p.AllCollections() {
		cols = slices.Clone(p.Collections)
		if cols == nil {
			cols = []string{}
		}
	}
	if f != nil && len(f.Collections) > 0 {
		for _, c := range f.Collections {
			if !p.CanSee(c) {
				return sf, workspace.Errorf(workspace.CodePermissionDenied, "collection %q is outside the caller's grant", c)
			}
			if cs := e.collections(); cs != nil && !slices.Contains(cs, c) {
				return sf, workspace.Errorf(workspace.CodeNotFound, "collection %q not found", c)
			}
		}
		cols = slices.Clone(f.Collections)
	}
	if cols != nil {
		if len(cols) == 0 {
			sf.none = true
			return sf, nil
		}
		sf.collections = cols
	}
	if f == nil {
		return sf, nil
	}
	if len(f.Sources) > 0 {
		rows, err := tx.QueryContext(ctx, `SELECT id, collection_id FROM sources WHERE id IN `+placeholders(len(f.Sources)), anyStrings(f.Sources)...)
		if err != nil {
			return sf, fmt.Errorf("search filters: %w", err)
		}
		found := map[string]bool{}
		for rows.Next() {
			var id, col string
			if err := rows.Scan(&id, &col); err != nil {
				rows.Close()
				return sf, fmt.Errorf("search filters: %w", err)
			}
			found[id] = p.CanSee(col)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return sf, fmt.Errorf("search filters: %w", err)
		}
		for _, id := range f.Sources {
			if !found[id] {
				return sf, workspace.Errorf(workspace.CodeNotFound, "source %q not found", id)
			}
		}
		sf.sources = f.Sources
	}
	sf.kinds = f.Kinds
	sf.languages = f.Languages
	sf.roles = f.Roles
	sf.exclude = f.ExcludeRoles
	sf.facets = f.Facets
	if len(f.Paths) > 0 {
		keys, err := matchPaths(ctx, tx, &sf, f.Paths)
		if err != nil {
			return sf, err
		}
		if len(keys) == 0 {
			sf.none = true
			return sf, nil
		}
		sf.pathKeys = keys
	}
	return sf, nil
}

// matchPaths lists the indexed files, within the collections and sources
// sf allows, whose source-relative path matches one of the globs, as
// "source\x00path" keys. The globs are compiled once (sources.CompileGlobs:
// braces expanded within limits, doublestar semantics; SQLite's GLOB has
// other rules) and the file list is narrowed first by their literal
// prefixes. ctx is checked every pathCheckEvery files.
func matchPaths(ctx context.Context, tx *sql.Tx, sf *scopeFilter, globs []string) ([]string, error) {
	set, err := sources.CompileGlobs(globs)
	if err != nil {
		return nil, invalid("filters.paths%v", err)
	}
	q := `SELECT fi.source_id, fi.path FROM files fi JOIN sources s ON s.id = fi.source_id WHERE fi.status = 'indexed'`
	var args []any
	if sf.collections != nil {
		q += " AND s.collection_id IN " + placeholders(len(sf.collections))
		args = append(args, anyStrings(sf.collections)...)
	}
	if len(sf.sources) > 0 {
		q += " AND fi.source_id IN " + placeholders(len(sf.sources))
		args = append(args, anyStrings(sf.sources)...)
	}
	if pres := set.Prefixes(); len(pres) > 0 {
		ranges := make([]string, 0, len(pres))
		for _, pre := range pres {
			ranges = append(ranges, "(fi.path >= ? AND fi.path < ?)")
			args = append(args, pre, pre+"\U0010FFFF")
		}
		q += " AND (" + strings.Join(ranges, " OR ") + ")"
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search filters: %w", err)
	}
	defer rows.Close()
	keys := []string{}
	for n := 0; rows.Next(); n++ {
		if n%pathCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var src, path string
		if err := rows.Scan(&src, &path); err != nil {
			return nil, fmt.Errorf("search filters: %w", err)
		}
		if set.Match(path) {
			keys = append(keys, src+"\x00"+path)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search filters: %w", err)
	}
	return keys, nil
}

// pathCheckEvery is how many files matchPaths matches between two looks at
// its context.
const pathCheckEvery = 256

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// collections are the workspace's configured collections now.
func (e *Engine) collections() []string {
	if e.CollectionsNow != nil {
		return e.CollectionsNow()
	}
	return e.Collections
}
