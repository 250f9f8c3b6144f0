#!/usr/bin/env bash
# The whole job on the embedded defaults, from a fresh clone with only Go:
# build tychora, index this repository into a fresh workspace (progress on
# the terminal), answer a question with a budgeted agent@1 answer, and print
# the MCP configuration for it.
set -euo pipefail
cd "$(dirname "$0")"
repo=$PWD
ws="$repo/.tychora-quickstart"

echo "== build"
go build -o bin/tychora ./cmd/tychora
tychora() { bin/tychora --workspace "$ws" "$@"; }

echo "== a fresh workspace in $ws"
rm -rf "$ws"
tychora init --ingest-root "$repo" >/dev/null

echo "== index this repository"
tychora add --wait --name tychora --exclude quickstart.sh "$repo"

question=${1:-"how does a job resume after the owner is killed"}
echo "== search (agent@1, 1000 tokens): $question"
tychora search --budget 1000 --render agent@1 "$question"

echo "== MCP configuration (stdio; paste into your client)"
tychora mcp-config
