package jobs

import (
	"time"

	"github.com/tychora/tychora/workspace"
)

// Kinds of job.
const (
	KindAdd  = "add"
	KindSync = "sync"
)

// States of a job. queued and running are active; the others are final.
const (
	StateQueued    = "queued"
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// ValidState reports whether s names a state.
func ValidState(s string) bool {
	switch s {
	case StateQueued, StateRunning, StateSucceeded, StateFailed, StateCancelled:
		return true
	}
	return false
}

// Progress counts what a job has done so far.
type Progress struct {
	FilesSeen int64 `json:"files_seen"`
	Indexed   int64 `json:"indexed"`
	Unchanged int64 `json:"unchanged"`
	Skipped   int64 `json:"skipped"`
	// Deleted counts the files that left the index; it is known once the
	// sync's walk is done.
	Deleted int64 `json:"deleted"`
	Bytes   int64 `json:"bytes"`
}

// JobError is a failed job's public error.
type JobError struct {
	Code    workspace.Code `json:"code"`
	Message string         `json:"message"`
}

// Job is the JobHandle of DESIGN §3.
type Job struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"`
	State        string     `json:"state"`
	SourceID     string     `json:"source_id"`
	CollectionID string     `json:"collection_id"`
	Attempt      int        `json:"attempt"`
	Progress     Progress   `json:"progress"`
	Error        *JobError  `json:"error"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`

	principal string
	seq       int64
	// paths, when limited, are the only paths the sync looks at (see
	// EnqueuePaths); otherwise it syncs the whole source.
	paths   []string
	limited bool
}

// Paths returns the paths a path-limited sync looks at, and true; false
// for a job that syncs the whole source.
func (j Job) Paths() ([]string, bool) { return j.paths, j.limited }

// Principal is the ID of the principal that created the job.
func (j Job) Principal() string { return j.principal }

// Final reports whether the job has reached a final state.
func (j Job) Final() bool {
	return j.State == StateSucceeded || j.State == StateFailed || j.State == StateCancelled
}
