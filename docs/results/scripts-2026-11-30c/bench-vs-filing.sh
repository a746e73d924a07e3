#!/bin/bash
# Issue 53: the time outside the network per simulation in self-play, this build against
# (1) commit 6fd78c8, the last before the issue's first change (ac79df0), with the
#     benchmark of ac79df0 patched in (6fd78c8-bench.patch beside this script: the
#     quiescence mix around the network as self-play has it, the network's CPU time
#     counted apart; no per-part counters, so no clock reads at the leaves), and
# (2) commit 2d31e30 with this tree's sampled counters (search/src/leafprof.rs copied in),
# in one run, alternating, ROUNDS rounds (default 5). All three play the same games
# (the same simulations); the network is f32 in all (the old builds' only CPU path).
# From the repository root, on an otherwise idle machine:
#   docs/results/scripts-2026-11-30c/bench-vs-filing.sh OUT [ROUNDS]
# Builds each old tree once into /work/target-<commit> (12-15 minutes each on two cores).
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=docs/results/scripts-2026-11-30c
out=${1:-/tmp/bench-vs-filing.txt}
rounds=${2:-5}
build_old() { # commit, then how to prepare its tree
  local c=$1 wt=/work/wt-$1
  if [ ! -x /work/target-$c/release/copper ]; then
    [ -d "$wt" ] || git worktree add "$wt" "$c"
    shift
    "$@" "$wt"
    (cd "$wt" && CARGO_TARGET_DIR=/work/target-$c cargo build --release -p cli)
  fi
}
# Applied once: a tree left patched by an earlier, interrupted build is used as it is.
patch_filing() { if git -C "$1" diff --quiet; then git -C "$1" apply "$PWD/$here/6fd78c8-bench.patch"; fi; }
copy_leafprof() { cp search/src/leafprof.rs "$1/search/src/leafprof.rs"; }
build_old 6fd78c8 patch_filing
build_old 2d31e30 copy_leafprof
cargo build --release -p cli
git show 6fd78c8:configs/default.toml > /tmp/default-6fd78c8.toml
git show 2d31e30:configs/default.toml > /tmp/default-2d31e30.toml
# Today's default in f32: the old builds' only network path.
sed 's/^precision = "int8"/precision = "f32" /' configs/default.toml > /tmp/default-f32.toml
: > "$out"
for i in $(seq "$rounds"); do
  for b in 6fd78c8 2d31e30 new; do
    case $b in
      new) bin=target/release/copper c=/tmp/default-f32.toml ;;
      *) bin=/work/target-$b/release/copper c=/tmp/default-$b.toml ;;
    esac
    echo "== $b run $i" >> "$out"
    nice -n -5 "$bin" bench-selfplay --config "$c" --model models/pocket-copper --games 32 >> "$out" 2>&1
  done
done
grep -E "^== |outside the network" "$out"
