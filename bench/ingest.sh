#!/usr/bin/env bash
# Ingest benchmark: the real pipeline against a plain FTS5 bulk insert of the
# same files, on a copy of $(go env GOROOT)/src without its testdata
# directories. See bench/README.md.
#
#   bench/ingest.sh            # run it
#   KEEP=1 bench/ingest.sh     # keep the temporary directory
#   CORPUS=/some/dir bench/ingest.sh   # another corpus (copied the same way)
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/tychora-ingest.XXXXXX")
if [[ -z "${KEEP:-}" ]]; then
	trap 'rm -rf "$work"' EXIT
else
	echo "keeping $work" >&2
fi

src=${CORPUS:-$(go env GOROOT)/src}
mkdir -p "$work/corpus"
tar --exclude=testdata -C "$src" -cf - . | tar -C "$work/corpus" -xf -
go build -o "$work/ingestbench" ./bench/cmd/ingestbench

# Peak RSS: GNU time's "Maximum resident set size" when /usr/bin/time is
# there (installed with apt-get when missing and possible), else the
# program's own VmHWM from /proc/self/status.
timer=""
if [[ ! -x /usr/bin/time ]] && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
	apt-get install -y time >/dev/null 2>&1 || true
fi
if [[ -x /usr/bin/time ]]; then
	timer=/usr/bin/time
	rss_source="/usr/bin/time -v (Maximum resident set size)"
else
	rss_source="/proc/self/status VmHWM"
fi

# run NAME ARGS...: runs ingestbench, leaves its JSON in $work/NAME.json and
# the time report in $work/NAME.time.
run() {
	local name=$1
	shift
	if [[ -n $timer ]]; then
		$timer -v "$work/ingestbench" "$@" >"$work/$name.json" 2>"$work/$name.time"
	else
		"$work/ingestbench" "$@" >"$work/$name.json" 2>"$work/$name.time"
	fi
}

field() { # field FILE KEY
	sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" "$1"
}

rss_kb() { # rss_kb NAME
	local v=""
	if [[ -n $timer ]]; then
		v=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/$1.time")
	fi
	[[ -n $v ]] || v=$(field "$work/$1.json" peak_rss_kb)
	echo "$v"
}

cpu_s() { # cpu_s NAME: user + system seconds, when /usr/bin/time ran
	[[ -n $timer ]] || { echo "?"; return; }
	awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$work/$1.time"
}

run fts -mode fts -dir "$work/corpus" -db "$work/fts.db"
run pipeline -mode pipeline -dir "$work/corpus" -workspace "$work/ws"
run rows -mode fts-rows -workspace "$work/ws" -db "$work/rows.db" # the rows the pipeline indexed, FTS5 alone
run resync -mode resync -dir "$work/corpus" -workspace "$work/ws"
run rewrite -mode rewrite -dir "$work/corpus" -workspace "$work/ws" # changes every file of the copy

fts_mbs=$(field "$work/fts.json" mb_per_s)
pipe_mbs=$(field "$work/pipeline.json" mb_per_s)
echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine:   $(nproc) cores, $(go version | cut -d' ' -f3-), corpus $(du -sh "$work/corpus" | cut -f1) ($src minus testdata)"
echo "peak RSS:  from $rss_source"
printf '%-9s %7s files %8s MB %8s s %9s files/s %7s MB/s %6s s cpu %7s MB RSS\n' \
	raw-fts "$(field "$work/fts.json" files)" "$(awk "BEGIN{printf \"%.1f\", $(field "$work/fts.json" bytes)/1048576}")" \
	"$(awk "BEGIN{printf \"%.2f\", $(field "$work/fts.json" seconds)}")" \
	"$(awk "BEGIN{printf \"%.0f\", $(field "$work/fts.json" files_per_s)}")" \
	"$(awk "BEGIN{printf \"%.2f\", $fts_mbs}")" "$(cpu_s fts)" "$(( $(rss_kb fts) / 1024 ))"
printf '%-9s %7s files %8s MB %8s s %9s files/s %7s MB/s %6s s cpu %7s MB RSS\n' \
	pipeline "$(field "$work/pipeline.json" files)" "$(awk "BEGIN{printf \"%.1f\", $(field "$work/pipeline.json" bytes)/1048576}")" \
	"$(awk "BEGIN{printf \"%.2f\", $(field "$work/pipeline.json" seconds)}")" \
	"$(awk "BEGIN{printf \"%.0f\", $(field "$work/pipeline.json" files_per_s)}")" \
	"$(awk "BEGIN{printf \"%.2f\", $pipe_mbs}")" "$(cpu_s pipeline)" "$(( $(rss_kb pipeline) / 1024 ))"
printf 'resync    %7s files (unchanged) in %s s, %s MB RSS\n' "$(field "$work/resync.json" files)" \
	"$(awk "BEGIN{printf \"%.3f\", $(field "$work/resync.json" seconds)}")" "$(( $(rss_kb resync) / 1024 ))"
printf 'rewrite   %7s files (every one changed) in %s s, %s s cpu, %s MB RSS\n' "$(field "$work/rewrite.json" files)" \
	"$(awk "BEGIN{printf \"%.2f\", $(field "$work/rewrite.json" seconds)}")" "$(cpu_s rewrite)" "$(( $(rss_kb rewrite) / 1024 ))"
printf 'fts-rows  %7s units, the same rows into an FTS5 table like the index: %s s, %s s cpu\n' "$(field "$work/rows.json" units)" \
	"$(awk "BEGIN{printf \"%.2f\", $(field "$work/rows.json" seconds)}")" "$(cpu_s rows)"
echo "pipeline / raw FTS5 throughput: $(awk "BEGIN{printf \"%.0f%%\", 100*$pipe_mbs/$fts_mbs}") (target >= 60%)"
echo "pipeline / FTS5 insert of the same rows: $(awk "BEGIN{printf \"%.0f%%\", 100*$(field "$work/rows.json" seconds)/$(field "$work/pipeline.json" seconds)}")"
grep -h "sync applied" "$work/pipeline.time" | sed 's/.*\(walk_ms=\)/phases: \1/' || true
echo "then the index merge a sync job runs after it (searchable before): $(field "$work/pipeline.json" optimize_seconds) s"

