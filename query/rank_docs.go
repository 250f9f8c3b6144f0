package query

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"

	"github.com/tychora/tychora/sources"
)

// Documentation beside code. A source that holds code of its own
// (codeSourceFiles files or more of role source and kind code: a
// repository, a project folder) also holds its documentation: the user
// guide, the API reference, the tutorial, which explain in the
// question's own words what the code does. A question about that source ("where are proxies read from
// environment variables") wants the code, so there documentation counts
// ×docsBesideCode unless the question asks for it (roleWords: "docs",
// "documentation", "readme", "tutorial", or a role filter). A source of
// notes, papers or a manual holds no code, and its documentation is not
// demoted: it is what there is to find. docs/search.md ("Roles") has the
// measurements.
const docsBesideCode = 0.6

// codeSourceFiles is how many code files of role source make a source
// one that holds code: a folder of notes with a script or two, or a
// manual with its Makefile, make.bat and conf.py, does not.
const codeSourceFiles = 5

// docsPrior is the documentation prior of a unit of role role in source
// src, for a question that asks for no role.
func (q *preparedQuery) docsPrior(role, src string) float64 {
	if role == roleDocumentation && q.codeSources[src] {
		return docsBesideCode
	}
	return 1
}

// roleDocumentation is the documentation role's name.
const roleDocumentation = string(sources.RoleDocumentation)

// codeSourceCache keeps the sources that hold code of their own, for the
// last generation of the index searched.
type codeSourceCache struct {
	mu         sync.Mutex
	generation []byte
	sources    map[string]bool
}

// get returns the sources of generation gen that hold code, reading them
// within tx when the generation changed.
func (c *codeSourceCache) get(ctx context.Context, tx *sql.Tx, gen []byte) (map[string]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sources != nil && bytes.Equal(c.generation, gen) {
		return c.sources, nil
	}
	// Per source, the walk of its files stops at the codeSourceFiles-th
	// with code: only a source with fewer reads all of its rows.
	rows, err := tx.QueryContext(ctx, `SELECT s.id FROM sources s WHERE (SELECT count(*) FROM (SELECT 1 FROM files f
		WHERE f.source_id = s.id AND f.status = 'indexed' AND f.kind = 'code' AND coalesce(f.role, '') IN ('', 'source')
		LIMIT ?)) >= ?`, codeSourceFiles, codeSourceFiles)
	if err != nil {
		return nil, fmt.Errorf("search: sources with code: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search: sources with code: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: sources with code: %w", err)
	}
	c.generation, c.sources = slices.Clone(gen), out
	return out, nil
}
