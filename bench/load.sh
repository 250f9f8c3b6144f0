#!/usr/bin/env bash
# Load test of the search tool over MCP Streamable HTTP: builds tychora,
# indexes a copy of $(go env GOROOT)/src without its testdata directories,
# starts the owner (`tychora serve`) and drives it with go-sdk MCP clients
# (bench/cmd/load). Prints throughput, p50/p99 latency, errors and the
# owner's search-cache hit rate per scenario; exits 1 when a bound is
# missed. See bench/README.md.
#
#   bench/load.sh                      # scenarios a, b, c, d
#   SCENARIOS=a,b bench/load.sh        # some of them
#   PROFILE=1 bench/load.sh            # also profile the owner's CPU (keeps the directory)
#   bench/load.sh -cpuprofile F        # also profile the load generator's CPU, to F
#   KEEP=1 bench/load.sh               # keep the temporary directory
#   CORPUS=/some/dir bench/load.sh     # another tree (the questions are Go's)
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/tychora-load.XXXXXX")
[[ -n ${PROFILE:-} ]] && KEEP=1
owner=""
cleanup() {
	if [[ -n $owner ]] && kill -0 "$owner" 2>/dev/null; then
		kill -INT "$owner" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$owner" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$owner" 2>/dev/null || true
	fi
	if [[ -z ${KEEP:-} ]]; then
		rm -rf "$work"
	else
		echo "kept $work" >&2
	fi
}
trap cleanup EXIT

src=${CORPUS:-$(go env GOROOT)/src}
mkdir -p "$work/corpus"
tar --exclude=testdata -C "$src" -cf - . | tar -C "$work/corpus" -xf -
go build -o "$work/tychora" ./cmd/tychora
go build -o "$work/load" ./bench/cmd/load

ws=$work/ws
ty() { "$work/tychora" --workspace "$ws" "$@"; }
ty init --ingest-root "$work/corpus" >/dev/null
start=$(date +%s.%N)
ty add --wait --json "$work/corpus" >"$work/add.json"
grep -q '"state": *"succeeded"' "$work/add.json" || { cat "$work/add.json" >&2; exit 1; }
indexed=$(sed -n 's/.*"indexed": *\([0-9]*\).*/\1/p' "$work/add.json")

profile=()
[[ -n ${PROFILE:-} ]] && profile=(--cpuprofile "$work/owner.prof")
"$work/tychora" --workspace "$ws" serve "${profile[@]}" 2>"$work/serve.log" &
owner=$!
for _ in $(seq 200); do
	[[ -s $ws/.runtime/endpoint.json ]] && grep -q '"running"' "$ws/.runtime/endpoint.json" && break
	kill -0 "$owner" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
	sleep 0.05
done

echo "date:    $(date -u)"
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3-), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus:  $(du -sh "$work/corpus" | cut -f1), $(find "$work/corpus" -type f | wc -l) files ($src minus testdata), $indexed indexed in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}") s"
set +e
"$work/load" -workspace "$ws" -corpus "$work/corpus" -queries "$repo/bench/queries" -scenarios "${SCENARIOS:-a,b,c,d}" "$@"
status=$?
set -e
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n ${PROFILE:-} ]]; then
	kill -INT "$owner"
	wait "$owner" || true
	owner=""
	echo "owner CPU profile: go tool pprof $work/tychora $work/owner.prof"
fi
exit $status
