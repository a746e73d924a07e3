#!/usr/bin/env bash
# Issue 47, "More branches, and self-play from the soup": at the loop's evaluation budget
# (100 simulations, `mate=on,qmix=0.5,qscale=1000`, as `soup-ctl`'s loop played the README run's
# generation 168 every generation), the soup itself and soup-ctl's generation 32 against
# generation 168, on the same 256 openings (seed 9998, 4 random plies, colours paired).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
S=sims=100,mate=on,qmix=0.5,qscale=1000
for m in "models/pocket-copper soup4" "data/exp/soup-ctl/models/gen-0032 soup-ctl-g32"; do
  set -- $m
  out=data/exp/h2h100sims-$2-vs-g168
  [ -f "$out/done" ] && continue
  "$C" arena -v pocket-copper --mode gauntlet --rounds 128 --random-plies 4 --seed 9998 --threads 2 \
    -p "checkpoint:$1,$S,name=$2" -p "checkpoint:data/exp/anchor-g168,$S,name=g168" --out "$out"
  touch "$out/done"
done
