#!/usr/bin/env bash
# Many processes on one workspace (cmd/tychora/procs_test.go, also run by
# `go test ./...`): 20 sibling `tychora search` processes started at once
# all delegate to the owner, which ranks exactly 20 searches while no other
# process ever holds a lock on or opens the owner lock or the database
# (sampled from /proc/locks and /proc/PID/fd); then five `serve --stdio`
# processes make one owner and four bridges, all answering, and when the
# owner's client closes its stdin the four others keep answering, one of
# them as the new owner. Exits non-zero when any of that fails.
#
#   bench/procs.sh [COUNT]     # run the two tests COUNT times (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "date:    $(date -u)"
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3-), load average $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./cmd/tychora -run '^(TestManySearchProcesses|TestFiveStdioProcesses)$' -count="${1:-1}" -v 2>&1 |
	grep -E '^(--- |ok|FAIL|PASS)|procs_test\.go'
