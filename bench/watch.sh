#!/usr/bin/env bash
# Watching benchmark on a copy of $(go env GOROOT)/src made a git
# repository: write/rename → searchable over single edits, a git checkout
# that changes 1,000 files, watch set-up time, added memory and the CPU of
# an idle watching owner. See bench/README.md ("watch").
#
#   bench/watch.sh                       # 200 edits over a minute, a minute idle
#   EDITS=50 SPREAD=15s IDLE=15s bench/watch.sh   # a shorter run
#   KEEP=1 bench/watch.sh                # keep the temporary directory
#   bench/watch.sh -idle-cpuprofile /tmp/idle.pprof -checkout-cpuprofile /tmp/co.pprof
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/tychora-watch.XXXXXX")
if [[ -z "${KEEP:-}" ]]; then
	trap 'rm -rf "$work"' EXIT
else
	echo "keeping $work" >&2
fi

src=${CORPUS:-$(go env GOROOT)/src}
tree="$work/tree"
mkdir -p "$tree"
tar --exclude=testdata -C "$src" -cf - . | tar -C "$tree" -xf -
go build -o "$work/watchbench" ./bench/cmd/watchbench

# The tree becomes a repository with a branch that changes 1,000 .go
# files, each given its own token (zqco0000x, ...) in the order listed.
git -C "$tree" init -q -b main
git -C "$tree" -c user.name=bench -c user.email=bench@localhost add -A
git -C "$tree" -c user.name=bench -c user.email=bench@localhost commit -qm base
git -C "$tree" ls-files '*.go' | shuf -n 1000 --random-source=<(yes) | sort > "$work/rel.txt"
git -C "$tree" checkout -q -b bench-other
i=0
: > "$work/checkout.txt"
while read -r rel; do
	printf '\n// zqco%04dx\n' "$i" >> "$tree/$rel"
	echo "$tree/$rel" >> "$work/checkout.txt"
	i=$((i + 1))
done < "$work/rel.txt"
git -C "$tree" -c user.name=bench -c user.email=bench@localhost commit -qam "change 1,000 files"
git -C "$tree" checkout -q main
git -C "$tree" config user.name bench
git -C "$tree" config user.email bench@localhost

"$work/watchbench" -tree "$tree" -checkout-list "$work/checkout.txt" \
	-edits "${EDITS:-200}" -spread "${SPREAD:-60s}" -idle "${IDLE:-60s}" "$@"
