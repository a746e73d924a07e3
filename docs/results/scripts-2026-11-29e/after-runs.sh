#!/bin/bash
# After long-re (to generation 64) and its control long-nore (32 generations without
# reanalysis) have stopped: both rated at 100 ms against the yardstick on the opening sets
# long-re's generation 32 played (the machine otherwise idle), then both ladders at 100
# simulations on the anchors of long-re's first ladder (the model shipped before, 22f6e77's,
# under its old name). From the repository root.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# The runs and these games used a copy of the build of commit 0b1a37b (C=data/exp/copper-0b1a37b).
export C=${C:-target/release/copper}
while pgrep -f "$C train" > /dev/null; do sleep 30; done
R=docs/results/scripts-2026-11-29d/rate-long.sh
$R data/exp/long-nore/models/gen-0032 long-nore-g32 9101 9102 9103 9104
$R data/exp/long-re/models/gen-0064 long-re-g64 9101 9102 9103 9104 9401 9402 9403 9404
S=data/exp/shipped-22f6e77   # the model shipped before 2026-11-29, the anchor of long-re's first ladder
if [ ! -f $S/weights.bpk ]; then
  mkdir -p $S && for f in model.json weights.bpk; do git show 22f6e77:models/pocket-copper/$f > $S/$f; done
fi
A=(--anchor alphabeta,depth=2 --anchor alphabeta,depth=3
   --anchor "checkpoint:$S,sims=100,mate=on,qmix=0.5,qscale=1000,name=shipped")
[ -d data/exp/long-re/ladder-g32 ] || mv data/exp/long-re/ladder data/exp/long-re/ladder-g32
$C ladder --run data/exp/long-re "${A[@]}" --sims 100 --rounds 8 --every 8 --quiet > data/exp/ladder-long-re-g64.txt 2>&1
$C ladder --run data/exp/long-nore "${A[@]}" --sims 100 --rounds 8 --every 8 --quiet > data/exp/ladder-long-nore.txt 2>&1
touch data/exp/after-runs.done
