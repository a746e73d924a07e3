#!/usr/bin/env bash
# Issue 47, "The search that writes the targets": two arms from one copy of `grow-ctl` at its
# generation 32 (its window and optimiser kept), run side by side to generation GENS (default 48),
# then each rated against the start (README run gen 168) at 100 ms on the openings of the grow arms.
# First: cp -a data/exp/grow-ctl data/exp/m3-ctl; cp -a data/exp/grow-ctl data/exp/m3-arm (at gen 32),
# and in data/exp/m3-arm/config.toml (the stored config a run resumes with) set the two keys in which
# docs/results/m3-arm.toml differs: selfplay.mate_in_three = true and the anchor's mate3=all.
# Resumes where it stopped; GENS=64 goes on in place from 48.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
export C=${C:-target/release/copper}
GENS=${GENS:-48}
for a in m3-ctl m3-arm; do
  [ -d data/exp/$a/models/gen-00$GENS ] && continue
  nice -n 5 "$C" train --config docs/results/$a.toml --from-model data/exp/anchor-g168 --generations "$GENS" >> data/exp/$a-$GENS.log 2>&1 &
done
wait
for a in m3-ctl m3-arm; do
  docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/$a/models/gen-00$GENS $a-g$GENS 9916 9917 9918 9919 9920 9921 9922 9923
done
