#!/usr/bin/env bash
# soup-lr continued in place to generation 16 (resumable), then generation 16 against the
# README run's generation 168 at 100 simulations on fixed-sims.sh's openings (seed 9998).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30g/soup-lr.sh
C=${C:-target/release/copper}
[ -d data/exp/soup-lr/models/gen-0016 ] || "$C" train --config docs/results/soup-lr.toml \
  --from-model models/pocket-copper --generations 16 >> data/exp/soup-lr.log 2>&1
S=sims=100,mate=on,qmix=0.5,qscale=1000
out=data/exp/h2h100sims-soup-lr-g0016-vs-g168
[ -f "$out/done" ] || { "$C" arena -v pocket-copper --mode gauntlet --rounds 128 --random-plies 4 --seed 9998 --threads 2 \
  -p "checkpoint:data/exp/soup-lr/models/gen-0016,$S,name=soup-lr-g0016" -p "checkpoint:data/exp/anchor-g168,$S,name=g168" --out "$out"; touch "$out/done"; }
