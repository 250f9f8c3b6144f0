#!/usr/bin/env bash
# Bounded work per request (issue 16): builds tychora, indexes a copy of
# $(go env GOROOT)/src without its testdata directories, starts the owner
# (`tychora serve`) and runs bench/cmd/bounded against it: the nested-brace
# glob alone and 64 times in one request, a fifth client's latency while
# four tokens loop on the heaviest accepted request, and how soon a
# cancelled search frees the owner's CPU. See bench/README.md.
#
#   bench/bounded.sh                 # all of it in a temporary directory
#   WORK=/tmp/x bench/bounded.sh     # keep and reuse WORK (the index is built once)
#   OFFSET=300 bench/bounded.sh      # the fifth client's first question (ask new ones on a reused owner)
#   PROFILE=/tmp/o.prof ONLY=glob bench/bounded.sh -calls 2000   # the owner's CPU profile of one part:
#   PROFILE=/tmp/o.prof ONLY=fair bench/bounded.sh -heavy 0      #   glob, or fair (the fifth client)
#   TYCHORA=/tmp/old/tychora bench/bounded.sh                   # measure another build of tychora
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$PWD
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/tychora-bounded.XXXXXX")}
owner=""
cleanup() {
	if [[ -n $owner ]] && kill -0 "$owner" 2>/dev/null; then
		kill -INT "$owner" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$owner" 2>/dev/null || break; sleep 0.1; done
	fi
	[[ -n ${WORK:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

if [[ -n ${TYCHORA:-} ]]; then
	cp "$TYCHORA" "$work/tychora"
else
	go build -o "$work/tychora" ./cmd/tychora
fi
go build -o "$work/bounded" ./bench/cmd/bounded
ws=$work/ws
if [[ ! -d $ws ]]; then
	mkdir -p "$work/corpus"
	tar --exclude=testdata -C "$(go env GOROOT)/src" -cf - . | tar -C "$work/corpus" -xf -
	"$work/tychora" --workspace "$ws" init --ingest-root "$work/corpus" >/dev/null
	"$work/tychora" --workspace "$ws" add --wait --json "$work/corpus" >"$work/add.json"
fi
profile=()
[[ -n ${PROFILE:-} ]] && profile=(--cpuprofile "$PROFILE")
"$work/tychora" --workspace "$ws" serve "${profile[@]}" 2>"$work/serve.log" &
owner=$!
for _ in $(seq 200); do
	[[ -s $ws/.runtime/endpoint.json ]] && grep -q '"running"' "$ws/.runtime/endpoint.json" && break
	kill -0 "$owner" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
	sleep 0.05
done
echo "date:    $(date -u)"
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3-), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus:  $(find "$work/corpus" -type f | wc -l) files"
if [[ -n ${ONLY:-} ]]; then
	"$work/bounded" -workspace "$ws" -questions "$repo/bench/queries/distinct.txt" \
		-words "$work/corpus/runtime/proc.go" -offset "${OFFSET:-0}" -only "$ONLY" "$@"
	exit
fi
"$work/bounded" -workspace "$ws" -questions "$repo/bench/queries/distinct.txt" \
	-words "$work/corpus/runtime/proc.go" -offset "${OFFSET:-0}" "$@"
"$work/bounded" -workspace "$ws" -questions "$repo/bench/queries/distinct.txt" \
	-words "$work/corpus/runtime/proc.go" -offset "$(( ${OFFSET:-0} + 1000 ))" -heavy 0 "$@" | grep 'fair: fifth'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
