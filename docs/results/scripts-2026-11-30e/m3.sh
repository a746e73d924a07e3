#!/usr/bin/env bash
# Issue 47, "A three-ply mate check in self-play": two arms from one copy of `grow-ctl` at its
# generation 32 (its window and optimiser kept), run side by side to generation GENS (default 48),
# then each rated against the start (README run gen 168) at 100 ms on the openings of the grow arms.
# First: cp -a data/exp/grow-ctl data/exp/m3-ctl; cp -a data/exp/grow-ctl data/exp/m3-arm (at gen 32),
# and in data/exp/m3-arm/config.toml (the stored config a run resumes with) set the two keys in which
# docs/results/m3-arm.toml differs: selfplay.mate_in_three = true and the anchor's mate3=all.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-s2}
GENS=${GENS:-48}
for a in m3-ctl m3-arm; do
  [ -d data/exp/$a/models/gen-00$GENS ] && continue  # (run this script once at a time: two trains on one run directory collide)
  nice -n 5 "$C" train --config docs/results/$a.toml --from-model data/exp/anchor-g168 --generations "$GENS" >> data/exp/$a-$GENS.log 2>&1 &
done
wait
while pgrep -f "train --config docs/results/m3-" > /dev/null; do sleep 20; done
for a in m3-ctl m3-arm; do
  C=data/exp/copper-grow docs/results/scripts-2026-11-30e/../scripts-2026-11-30d/rate-vs-g168.sh data/exp/$a/models/gen-00$GENS $a-g$GENS 9916 9917 9918 9919 9920 9921 9922 9923
done
