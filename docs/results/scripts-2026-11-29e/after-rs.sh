#!/bin/bash
# After long-rs (32 generations restarted from long-re's generation 32, no reanalysis):
# rated at 100 ms against the yardstick on seeds 9101-9104 (the machine otherwise idle), then
# at 100 simulations against long-re's generation 64 (the same 32 generations, continued).
set -euo pipefail
cd "$(dirname "$0")/../../.."
# The runs and these games used a copy of the build of commit 0b1a37b (C=data/exp/copper-0b1a37b).
export C=${C:-target/release/copper}
while pgrep -f "$C train" > /dev/null; do sleep 30; done
docs/results/scripts-2026-11-29d/rate-long.sh data/exp/long-rs/models/gen-0032 long-rs-g32 9101 9102 9103 9104
P=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
$C arena -v pocket-copper --rounds 32 --random-plies 4 --seed 9502 --threads 2 \
  -p checkpoint:data/exp/long-rs/models/gen-0032,$P,name=rs-g32 \
  -p checkpoint:data/exp/long-re/models/gen-0064,$P,name=re-g64 --out data/exp/h2h-rs-re64-sims100 > data/exp/h2h-rs-re64-sims100.log 2>&1
touch data/exp/after-rs.done
