#!/bin/bash
# Issue 50: part 4 of the start-family network's study (seed 20261202): 900 games a cell
# brings the pooled study (parts 1–3: ~1,555 a cell, ±2.5 points) to about 2,450 a cell
# (±2.0). The same tier as parts 1–3; any build from commit 2d31e30 on plays the same moves
# (the later search changes keep every choice: docs/PERFORMANCE.md). Resumable.
#   C=BINARY THREADS=2 docs/results/scripts-2026-11-29b/balance-p4.sh
cd "$(dirname "$0")/../../.."
mkdir -p data/exp
nice -n 10 ${C:-target/release/copper} balance --tier "checkpoint:models/pocket-copper-starts,sims=100,mate=on,qmix=0.5,qscale=1000,name=starts-100" \
  --starts all --games 900 --threads ${THREADS:-2} --seed 20261202 --out data/exp/balance-starts-100-part4 --quiet > data/exp/balance-starts-100-part4.log 2>&1
