// Package jobs is the durable source-job queue: jobs persisted in SQLite,
// workers that claim them in a transaction, progress, cooperative cancel,
// retry, and resume after a crash.
package jobs
