package sources

// undoVisionMigration puts the schema back as it was before migration
// 0013 (vision selections), for the tests that run earlier migrations
// again over an index of today.
var undoVisionMigration = []string{
	`DROP TRIGGER vision_texts_leave`, `DROP TABLE vision_texts`, `DROP TABLE vision_requests`,
	`DROP INDEX jobs_one_active`, `ALTER TABLE jobs DROP COLUMN selection_id`,
	`CREATE UNIQUE INDEX jobs_one_active ON jobs(source_id) WHERE state IN ('queued', 'running')`,
}
