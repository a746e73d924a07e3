#!/bin/bash
# Issue 53: the time outside the network per simulation, this build against the build of
# commit 2d31e30 (the first whose `bench-selfplay` runs the quiescence mix), both with this
# commit's sampled leaf counters (search/src/leafprof.rs copied into the old tree, so that
# neither pays a clock read per check), in one run, alternating, three runs each.
# From the repository root, on an otherwise idle machine:
#   docs/results/scripts-2026-11-30b/bench-vs-2d31e30.sh OUT
# Builds the old tree once into /work/target-2d31e30 (about 15 minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-/tmp/bench-vs-2d31e30.txt}
wt=${WT:-/work/wt-2d31e30}
if [ ! -x /work/target-2d31e30/release/copper ]; then
  [ -d "$wt" ] || git worktree add "$wt" 2d31e30
  cp search/src/leafprof.rs "$wt/search/src/leafprof.rs"
  (cd "$wt" && CARGO_TARGET_DIR=/work/target-2d31e30 cargo build --release -p cli)
fi
cargo build --release -p cli
old=/work/target-2d31e30/release/copper; new=target/release/copper
git show 2d31e30:configs/default.toml > /tmp/default-2d31e30.toml
# Today's default in f32: the old build's only network path.
sed 's/^precision = "int8"/precision = "f32" /' configs/default.toml > /tmp/default-f32.toml
: > "$out"
for i in 1 2 3; do
  for b in old new; do
    if [ $b = old ]; then bin=$old; c=/tmp/default-2d31e30.toml; else bin=$new; c=/tmp/default-f32.toml; fi
    echo "== $b run $i" >> "$out"
    nice -n -5 "$bin" bench-selfplay --config "$c" --model models/pocket-copper --games 32 >> "$out" 2>&1
  done
done
grep -E "^== |outside the network" "$out"
