#!/usr/bin/env bash
# Copy a rating's tables from data/exp/NAME to docs/results/NAME (the games gzipped): each
# opening set's folder NAME/s<seed>, or NAME itself where it is one tournament.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for n in "$@"; do
  if [ -f "data/exp/$n/summary.json" ]; then dirs=("data/exp/$n"); else dirs=(data/exp/"$n"/s*); fi
  for d in "${dirs[@]}"; do
    o=docs/results/${d#data/exp/}; mkdir -p "$o"
    cp "$d"/{pairings.csv,ratings.csv,summary.json,tournament.toml} "$o"/
    gzip -9c "$d/results.jsonl" > "$o/results.jsonl.gz"
  done
done
