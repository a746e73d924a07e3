#!/usr/bin/env bash
# Issue 47: the three-ply mate arm repeated with a second training seed (9962). Both arms from a
# copy of `grow-ctl` at its generation 32, as m3.sh made `m3-ctl`/`m3-arm`, then 16 generations
# side by side; each generation 48 then plays the yardstick alpha-beta on eight fresh sets.
# First: cp -a data/exp/grow-ctl data/exp/m3-{ctl,arm}-s2 and, in each copy's config.toml, set
# run_dir, seed = 9962, generations = 48, and for the arm the two keys of docs/results/m3-arm.toml.
# Resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
export C=${C:-target/release/copper}
for a in m3-ctl-s2 m3-arm-s2; do
  [ -d data/exp/$a/models/gen-0048 ] && continue
  nice -n 5 "$C" train --config docs/results/$a.toml --from-model data/exp/anchor-g168 --generations 48 >> data/exp/$a-48.log 2>&1 &
done
wait
S="9962 9963 9964 9965 9966 9967 9968 9969"
for a in m3-arm-s2 m3-ctl-s2; do
  docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/$a/models/gen-0048 $a-g48 $S
done
