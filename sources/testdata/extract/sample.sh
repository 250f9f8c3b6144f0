#!/usr/bin/env bash
set -euo pipefail

# Config.
NAME="demo"
DIR=${1:-/tmp}

usage() {
  echo "usage: $0 dir"
}

function build {
  cat <<EOF2
} not a brace
if not a keyword
EOF2
  go build ./...
}

if [ -z "$DIR" ]; then
usage
exit 1
fi

for f in "$DIR"/*; do
  echo "$f"
done

case "$1" in
  start) build ;;
  *) usage ;;
esac

build
