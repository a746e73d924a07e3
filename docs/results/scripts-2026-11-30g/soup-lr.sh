#!/usr/bin/env bash
# Arm soup-lr (issue 47): soup-ctl at a fifth of the learning rate, 4 generations, then its
# generations 1 and 4 against the README run's generation 168 at 100 simulations on
# fixed-sims.sh's openings (seed 9998), where the soup scores 176/256 and soup-ctl's generation 1 150.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
[ -d data/exp/soup-lr/models/gen-0004 ] || "$C" train --config docs/results/soup-lr.toml \
  --from-model models/pocket-copper --generations 4 >> data/exp/soup-lr.log 2>&1
S=sims=100,mate=on,qmix=0.5,qscale=1000
for g in 0001 0004; do
  out=data/exp/h2h100sims-soup-lr-g$g-vs-g168
  [ -f "$out/done" ] && continue
  "$C" arena -v pocket-copper --mode gauntlet --rounds 128 --random-plies 4 --seed 9998 --threads 2 \
    -p "checkpoint:data/exp/soup-lr/models/gen-$g,$S,name=soup-lr-g$g" -p "checkpoint:data/exp/anchor-g168,$S,name=g168" --out "$out"
  touch "$out/done"
done
