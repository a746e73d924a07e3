#!/usr/bin/env bash
# Copy a rating's tables from data/exp/NAME to docs/results/NAME (the games gzipped).
set -euo pipefail
cd "$(dirname "$0")/../../.."
for n in "$@"; do
  for d in data/exp/$n/s*; do
    o=docs/results/$n/$(basename "$d"); mkdir -p "$o"
    cp "$d"/{pairings.csv,ratings.csv,summary.json,tournament.toml} "$o"/
    gzip -9c "$d/results.jsonl" > "$o/results.jsonl.gz"
  done
done
