#!/usr/bin/env bash
# Fault figures: SIGKILL at N points of an ingest (TestCrashSafety), and,
# with --all, SIGTERM under load (TestShutdownUnderLoad), a full disk
# (TestDiskFull, needs root for its tmpfs) and the hostile-request table
# (TestHostileRequests). Each test prints its figures and fails when a
# bound is missed; this script runs them without the race detector, on a
# larger tree than CI's, and prints the lines to record in bench/README.md.
#
#   bench/crash.sh                      # 12000 files, 20 kills
#   FILES=3000 KILLS=40 bench/crash.sh  # other sizes
#   bench/crash.sh --all                # the other fault tests too
set -euo pipefail

cd "$(dirname "$0")/.."
files=${FILES:-12000}
kills=${KILLS:-20}
log=$(mktemp "${TMPDIR:-/tmp}/tychora-crash.XXXXXX")
trap 'rm -f "$log"' EXIT

echo "date -u: $(date -u)"
echo "machine: $(uname -sm), $(nproc) cores, $(go env GOVERSION), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: TYCHORA_CRASH_FILES=$files TYCHORA_CRASH_KILLS=$kills go test -count=1 -timeout 60m -run '^TestCrashSafety\$' -v ./cmd/tychora"
start=$(date +%s)
status=0
TYCHORA_CRASH_FILES=$files TYCHORA_CRASH_KILLS=$kills \
	go test -count=1 -timeout 60m -run '^TestCrashSafety$' -v ./cmd/tychora >"$log" 2>&1 || status=$?
# The test's own lines: the reference profile, each kill, each chain, the sum.
grep -E 'crash_test.go:[0-9]+: (reference|chain|[0-9]+ kills)|^ +[0-9]+ [0-9]+  |^(---|ok|FAIL)' "$log" | sed 's/^ *crash_test.go:[0-9]*: //'
echo "wall: $(( $(date +%s) - start )) s"
if [[ $status != 0 ]]; then
	echo "TestCrashSafety FAILED; its log:" >&2
	tail -50 "$log" >&2
	exit "$status"
fi

if [[ ${1:-} == --all ]]; then
	for t in cmd/tychora:TestShutdownUnderLoad runtime:TestDiskFull runtime:TestHostileRequests; do
		pkg=${t%%:*} name=${t#*:}
		echo
		echo "command: go test -count=1 -run '^$name\$' -v ./$pkg"
		go test -count=1 -run "^$name\$" -v "./$pkg" >"$log" 2>&1 || status=$?
		grep -E '(shutdown|diskfull|hostile)_test.go:[0-9]+:|^(---|ok|FAIL)|SKIP' "$log" | grep -v '^    --- PASS' || true
		[[ $status == 0 ]] || { tail -50 "$log" >&2; exit "$status"; }
	done
fi
