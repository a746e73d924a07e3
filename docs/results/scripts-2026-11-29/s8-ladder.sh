#!/bin/bash
# Issue 47: every 8th generation of the int8 run of the README's command on the ladder of
# the f32 run (docs/TRAINING.md), then part 3 of the balance study goes on.
cd /work/main
nice -n -5 data/exp/copper-i8 ladder --run data/exp/s8 --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
  --anchor "checkpoint:models/pocket-copper,sims=100,mate=on,qmix=0.5,qscale=1000,name=shipped" \
  --sims 100 --rounds 8 --every 8 > data/exp/s8-ladder.log 2>&1
THREADS=2 data/exp/balance-p3.sh
