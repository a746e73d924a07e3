#!/usr/bin/env bash
# A model against the README run's generation 168 (data/exp/anchor-g168) at the loop's
# evaluation budget: 100 simulations, `mate=on,qmix=0.5,qscale=1000`, 256 games on the openings
# of seed 9998 (4 random plies, colours paired). Usage: vs-g168-100sims.sh MODEL_DIR NAME (resumable)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
S=sims=100,mate=on,qmix=0.5,qscale=1000
out=data/exp/h2h100sims-$2-vs-g168
[ -f "$out/done" ] && exit 0
"$C" arena -v pocket-copper --mode gauntlet --rounds 128 --random-plies 4 --seed 9998 --threads 2 \
  -p "checkpoint:$1,$S,name=$2" -p "checkpoint:data/exp/anchor-g168,$S,name=g168" --out "$out"
touch "$out/done"
