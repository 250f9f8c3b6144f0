#!/usr/bin/env bash
# MCP sessions and the owner's memory: builds tychora, indexes a small
# workspace (a copy of docs/), then for each token count starts a fresh
# owner (`tychora serve`) and sends it 10,000 initialize requests, each
# with its notifications/initialized and none ended (bench/cmd/sessions).
# Prints the owner's VmRSS idle and after, and exits 1 when it grew by more
# than 20 MB. See bench/README.md.
#
#   bench/sessions.sh                 # the owner token, then 4 and 20 read tokens
#   TOKENS="0 4" bench/sessions.sh    # some of them (0: the owner token)
#   N=5000 bench/sessions.sh          # another number of sessions
#   TYCHORA=/path/to/tychora bench/sessions.sh   # another build
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/tychora-sessions.XXXXXX")
owner=""
stop_owner() {
	if [[ -n $owner ]] && kill -0 "$owner" 2>/dev/null; then
		kill -INT "$owner" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$owner" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$owner" 2>/dev/null || true
	fi
	owner=""
}
cleanup() {
	stop_owner
	rm -rf "$work"
}
trap cleanup EXIT

bin=${TYCHORA:-$work/tychora}
[[ -n ${TYCHORA:-} ]] || go build -o "$bin" ./cmd/tychora
go build -o "$work/sessions" ./bench/cmd/sessions
mkdir -p "$work/corpus"
cp -r docs "$work/corpus/"
ws=$work/ws
"$bin" --workspace "$ws" init --ingest-root "$work/corpus" >/dev/null
"$bin" --workspace "$ws" add --wait --json "$work/corpus" >"$work/add.json"
grep -q '"state": *"succeeded"' "$work/add.json" || { cat "$work/add.json" >&2; exit 1; }

echo "date:    $(date -u)"
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3-), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus:  $(find "$work/corpus" -type f | wc -l) files (docs/)"
status=0
for k in ${TOKENS:-0 4 20}; do
	"$bin" --workspace "$ws" serve 2>"$work/serve.log" &
	owner=$!
	for _ in $(seq 200); do
		[[ -s $ws/.runtime/endpoint.json ]] && grep -q '"running"' "$ws/.runtime/endpoint.json" && break
		kill -0 "$owner" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
		sleep 0.05
	done
	echo "--- tokens: $k"
	"$work/sessions" -workspace "$ws" -n "${N:-10000}" -tokens "$k" || status=1
	stop_owner
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
