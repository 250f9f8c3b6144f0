#!/usr/bin/env bash
# Code questions over other code bases, all in one workspace: builds
# tychora, checks out each repository of bench/queries/other-repos.repos
# under REPOS (a folder per key; cloned at its commit when missing, which
# needs the network), adds each as a source of a new workspace and scores
# bench/queries/other-repos.tsv with bench/other-repos.py (overall and per
# repository). See bench/README.md, "Files named by the question".
#
#   bench/other-repos.sh REPOS            # a temporary workspace
#   KEEP=1 bench/other-repos.sh REPOS     # keep it (its path is printed)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 REPOS" >&2; exit 2; }
cd "$(dirname "$0")/.."
repos=$(mkdir -p "$1" && cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tychora-other.XXXXXX")
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$work"' EXIT; else echo "kept $work" >&2; fi
go build -o "$work/tychora" ./cmd/tychora
ws=$work/ws
"$work/tychora" --workspace "$ws" init --ingest-root "$repos" >/dev/null
pairs=()
while IFS=$'\t' read -r key url commit; do
	[[ -z $key || $key == \#* ]] && continue
	if [[ ! -d $repos/$key ]]; then
		git clone -q "$url" "$repos/$key"
		git -C "$repos/$key" checkout -q "$commit"
	fi
	out=$("$work/tychora" --workspace "$ws" add --wait --json "$repos/$key")
	grep -q '"state": *"succeeded"' <<<"$out" || { echo "$key: $out" >&2; exit 1; }
	src=$(sed -n 's/.*"source_id": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1)
	pairs+=("$key=$src")
	echo "added $key ($(git -C "$repos/$key" log -1 --format=%h 2>/dev/null || echo '?')) as $src" >&2
done < bench/queries/other-repos.repos
python3 bench/other-repos.py "$work/tychora" "$ws" bench/queries/other-repos.tsv "${pairs[@]}"
