#!/usr/bin/env bash
# Issue 47: every generation of the shipped model's run (`m3-arm`: `grow-ctl`'s 32 generations from
# the README run's generation 168, then 16 with the three-ply mate check) on one ladder, each
# against one fixed anchor near the run's strength: its start (generation 0, README run gen 168)
# with the same search. 100 simulations, 8 opening pairs (16 games) a generation.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
nice -n 5 "$C" ladder --run data/exp/m3-arm --no-neighbours --sims 100 --rounds "${ROUNDS:-8}" --quiet \
  --anchor "checkpoint:data/exp/anchor-g168,sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000,name=start-g168"
