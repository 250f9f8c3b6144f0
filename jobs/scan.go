package jobs

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/tychora/tychora/workspace"
)

const jobColumns = `seq, id, kind, state, source_id, collection_id, principal, attempt,
	files_seen, indexed, unchanged, skipped, bytes, deleted, error_code, error_message,
	created_at, started_at, finished_at, paths`

type scanner interface{ Scan(dest ...any) error }

func scanJob(s scanner) (Job, error) {
	var (
		j                 Job
		code, msg         sql.NullString
		created           string
		started, finished sql.NullString
		paths             sql.NullString
	)
	err := s.Scan(&j.seq, &j.ID, &j.Kind, &j.State, &j.SourceID, &j.CollectionID, &j.principal, &j.Attempt,
		&j.Progress.FilesSeen, &j.Progress.Indexed, &j.Progress.Unchanged, &j.Progress.Skipped, &j.Progress.Bytes, &j.Progress.Deleted,
		&code, &msg, &created, &started, &finished, &paths)
	if err != nil {
		return Job{}, err
	}
	if paths.Valid && json.Unmarshal([]byte(paths.String), &j.paths) == nil {
		j.limited = true
	}
	if code.Valid {
		j.Error = &JobError{Code: workspace.Code(code.String), Message: msg.String}
	}
	j.CreatedAt = parseStamp(created)
	if started.Valid {
		t := parseStamp(started.String)
		j.StartedAt = &t
	}
	if finished.Valid {
		t := parseStamp(finished.String)
		j.FinishedAt = &t
	}
	return j, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
