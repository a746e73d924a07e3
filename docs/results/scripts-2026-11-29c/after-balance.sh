#!/bin/bash
# Issue 50 then issue 47, chained on one two-core machine, run from the repository root:
#   setsid nohup docs/results/scripts-2026-11-29c/after-balance.sh &
# 1. Waits for part 4 of the start-family network's balance study
#    (docs/results/scripts-2026-11-29b/balance-p4.sh) to finish, copies its CSVs to
#    docs/results/balance-starts100-part4-*, pools parts 1-4, and pools the result with the
#    depth-4 alpha-beta study (the tiers' comparison). No game is played by the pooling.
# 2. Then the reanalysis arms with averaged targets (training.reanalyse_keep = 0.5 beside
#    reanalyse_fraction = 0.1), three training seeds, on the protocol of "Reanalysis" in
#    docs/ABLATIONS.md (arm-fm.sh; the controls fm*, fmre* are that section's).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=${B:-data/exp/copper-bal}
while pgrep -f "balance-starts-100-part4" > /dev/null; do sleep 30; done
P=data/exp/balance-starts-100-part4
if [ -f $P/cells.csv ]; then
  for f in cells comparisons games; do cp $P/$f.csv docs/results/balance-starts100-part4-$f.csv; done
  $B balance-pool docs/results/balance-starts100-part{1,2,3,4}-cells.csv --name starts-100-pooled --out data/exp/balance-starts100-pooled4 \
    > data/exp/balance-starts100-pooled4.log 2>&1
  $B balance-pool docs/results/balance-d4-2400-cells.csv data/exp/balance-starts100-pooled4/cells.csv --name tiers \
    --out data/exp/balance-tiers-d4-starts100-4 > data/exp/balance-tiers-d4-starts100-4.log 2>&1
fi
while [ ! -f data/exp/copper-keep.commit ]; do sleep 30; done
for s in 1 2 3; do
  name=fmrek; [ $s -gt 1 ] && name=fmrek$s
  C=data/exp/copper-keep docs/results/scripts-2026-11-29b/arm-fm.sh $name seed=$s reanalyse_fraction=0.1 reanalyse_keep=0.5 || exit 1
done
