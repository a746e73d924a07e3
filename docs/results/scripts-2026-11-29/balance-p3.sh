#!/bin/bash
# Issue 50: part 3 of the start-family network's study (seed 20261201): 1,840 games a cell
# brings the pooled study (parts 1–2: ~573 a cell) to ≥ 2,400 a cell.
cd /work/main
nice -n 10 data/exp/copper-b3 balance --tier "checkpoint:models/pocket-copper-starts,sims=100,mate=on,qmix=0.5,qscale=1000,name=starts-100" \
  --starts all --games 1840 --threads ${THREADS:-2} --seed 20261201 --out data/exp/balance-starts-100-part3 --quiet > data/exp/balance-starts-100-part3.log 2>&1
