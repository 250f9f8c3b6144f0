package interfaces

import (
	"encoding/json"

	"github.com/tychora/tychora/jobs"
)

// Actions of manage_job.
const (
	JobActionList   = "list"
	JobActionGet    = "get"
	JobActionCancel = "cancel"
	JobActionRetry  = "retry"
)

// ManageJobRequest is the argument object of manage_job and the body of
// POST /v1/manage_job. list takes state, cursor and limit; get, cancel and
// retry take job_id.
type ManageJobRequest struct {
	Action string `json:"action" jsonschema:"list, get, cancel or retry"`
	JobID  string `json:"job_id,omitempty" jsonschema:"the job, for get, cancel and retry"`
	State  string `json:"state,omitempty" jsonschema:"list only jobs in this state: queued, running, succeeded, failed or cancelled"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1 to 100 (default 20)"`
}

// ManageJobResult is {"job":JobHandle} for get, cancel and retry, and
// {"jobs":[...],"next_cursor":...} for list.
type ManageJobResult struct {
	Job        *jobs.Job  `json:"job,omitempty"`
	Jobs       []jobs.Job `json:"jobs,omitempty"`
	NextCursor *string    `json:"next_cursor,omitempty"`
}

// MarshalJSON writes exactly one of the two shapes.
func (r ManageJobResult) MarshalJSON() ([]byte, error) {
	if r.Job != nil {
		return json.Marshal(struct {
			Job *jobs.Job `json:"job"`
		}{r.Job})
	}
	js := r.Jobs
	if js == nil {
		js = []jobs.Job{}
	}
	return json.Marshal(struct {
		Jobs       []jobs.Job `json:"jobs"`
		NextCursor *string    `json:"next_cursor"`
	}{js, r.NextCursor})
}

// JobResult is the body of GET /v1/jobs/{id} and of add_sources.
type JobResult struct {
	Job jobs.Job `json:"job"`
}
