#!/usr/bin/env bash
# Issue 47: how fast self-play from the soup leaves it — soup-ctl's generations 1, 4 and 16
# against the README run's generation 168 at 100 simulations on fixed-sims.sh's openings (seed 9998).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
S=sims=100,mate=on,qmix=0.5,qscale=1000
for g in 0001 0004 0016; do
  out=data/exp/h2h100sims-soup-ctl-g$g-vs-g168
  [ -f "$out/done" ] && continue
  "$C" arena -v pocket-copper --mode gauntlet --rounds 128 --random-plies 4 --seed 9998 --threads 2 \
    -p "checkpoint:data/exp/soup-ctl/models/gen-$g,$S,name=soup-ctl-g$g" -p "checkpoint:data/exp/anchor-g168,$S,name=g168" --out "$out"
  touch "$out/done"
done
