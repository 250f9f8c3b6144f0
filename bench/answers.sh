#!/usr/bin/env bash
# What small-budget answers hold: asks the questions (the first 74 of
# bench/queries/distinct.txt, 40 lines of go-src.txt, 35 of idents.txt;
# 146 with the blank lines left out) through
# an owner of TYCHORA on workspace WS, each as JSON at 1,000 tokens and
# with agent@1 at 2,000, and prints per question the places returned and
# the tokens used, then their means. Needs jq. See bench/README.md, "JSON
# answers count their excerpt's span".
#
#   bench/answers.sh TYCHORA WS > OUT
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TYCHORA WS" >&2; exit 2; }
bin=$1 ws=$2
queries=$(cd "$(dirname "$0")/queries" && pwd)
rm -f "$ws/.runtime/endpoint.json"
"$bin" --workspace "$ws" serve 2>/dev/null &
owner=$!
trap 'kill -INT $owner 2>/dev/null; wait $owner 2>/dev/null || true' EXIT
for _ in $(seq 200); do
	grep -q '"running"' "$ws/.runtime/endpoint.json" 2>/dev/null && break
	sleep 0.1
done
sleep 4 # the owner's warm-up: a search before it is ranked without the file index
{
	grep -v '^#' "$queries/distinct.txt" | head -74
	grep -v '^#' "$queries/go-src.txt" | head -40
	grep -v '^#' "$queries/idents.txt" | head -35
} | while IFS= read -r q; do
	[[ -z $q ]] && continue
	a=$("$bin" --workspace "$ws" search --json --budget 1000 "$q" | jq -r '"\(.content_totals.hits_returned) \(.budget.used_tokens)"')
	b=$("$bin" --workspace "$ws" search --json --budget 2000 --render agent@1 "$q" | jq -r '"\(.content_totals.hits_returned) \(.budget.used_tokens)"')
	printf '%s\t%s\t%s\n' "$q" "$a" "$b"
done | tee /dev/stderr | awk -F'\t' '{split($2, a, " "); split($3, b, " "); h1 += a[1]; u1 += a[2]; h2 += b[1]; u2 += b[2]; n++}
	END {printf "questions %d  JSON at 1000: places %.2f, used %.1f  agent@1 at 2000: places %.2f, used %.1f\n", n, h1/n, u1/n, h2/n, u2/n}'
