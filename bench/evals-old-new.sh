#!/usr/bin/env bash
# Runs the quality evals (the code set, SciFact, ArguAna) on two checkouts
# of tychora one after the other, on the same machine in one run:
#   bench/evals-old-new.sh OLD_CHECKOUT NEW_CHECKOUT
# OLD_CHECKOUT must have bench/eval -set code (commit 985c3ff or later);
# make one with: git worktree add /tmp/old 985c3ff
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_CHECKOUT NEW_CHECKOUT" >&2; exit 2; }
echo "start $(date -u +%H:%M:%S)"
for d in "$1" "$2"; do
  echo "=== $d ($(git -C "$d" log --oneline -1 | cut -c1-60))"
  (cd "$d" && go run ./bench/eval -set code 2>&1 | grep -E "paged|plain|limit 10  first")
  (cd "$d" && go run ./bench/eval -set scifact -budgets "" -latency10=false 2>&1 | grep nDCG)
  (cd "$d" && go run ./bench/eval -set arguana -budgets "" 2>&1 | grep nDCG)
done
echo "end $(date -u +%H:%M:%S)"
