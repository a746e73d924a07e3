#!/usr/bin/env bash
# Soaks every parser of untrusted input (SFEN, USI, variant files, configs, shards, models,
# checkpoints) with mutated inputs for a set time per target; fails, with the inputs saved
# under data/fuzz/failures/, if any input panics, hangs or allocates gigabytes.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [soak options, e.g. --seed 2 --only sfen,shard-file]
#
# The table it prints (executions per target) is what the README's reliability section
# quotes; it is also written to data/fuzz/last-run.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
cargo build --release -p fuzz-soak --quiet
mkdir -p data/fuzz
target/release/soak --seconds "$seconds" "$@" | tee data/fuzz/last-run.md
