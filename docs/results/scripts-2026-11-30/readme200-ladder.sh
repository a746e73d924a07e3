#!/bin/bash
# Issue 47: the ladder of the README's run continued to generation 200 (readme200.sh),
# every 8th generation at 100 simulations against fixed anchors (alpha-beta depths 2 and 3,
# the shipped model of 22f6e77), 8 opening pairs a pairing; then the slope over each half.
# Run from the repository root after the run; resumable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
$C ladder --run data/exp/readme104 --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
  --anchor "checkpoint:data/exp/shipped-22f6e77,sims=100,mate=on,qmix=0.5,qscale=1000,name=shipped" \
  --sims 100 --rounds 8 --every 8 --quiet > data/exp/readme200-ladder.log 2>&1
python3 docs/results/scripts-2026-11-29e/stats.py halves data/exp/readme104/ladder/ladder.tsv 1 104 200 >> data/exp/readme200-ladder.log
python3 docs/results/scripts-2026-11-29e/stats.py halves data/exp/readme104/ladder/ladder.tsv 1 104 200 generation >> data/exp/readme200-ladder.log
