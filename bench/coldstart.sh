#!/usr/bin/env bash
# Time from starting `tychora serve --stdio` to the first tools/list answer
# (target: p50 under 50 ms, never blocked by pending jobs).
#   bench/coldstart.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/tychora
go build -o "$bin" ./cmd/tychora
go run ./bench/cmd/coldstart -bin "$bin" -n "${1:-30}"
