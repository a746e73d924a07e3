#!/usr/bin/env bash
# Issue 47, "A soup of the continuations", repeated: two more branches of `grow-ctl` at its
# generation 32 (the default recipe, training seeds 9986 and 9987: branches.sh) make
#   soup6  - the mean of all six generation-48 networks (the shipped soup's four parts and the two),
#   soup2n - the mean of the two new ones alone (a soup that shares none of the shipped one's parts),
# each rated with the shipped soup and the two new parts against the yardstick alpha-beta on
# eight fresh sets (seeds 9990-9997), int8, 100 ms, one thread each: the same openings for all.
# Usage: soup6.sh (after branches.sh; run alone on an idle machine; resumable)
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
for s in 9986 9987; do
  [ -f data/exp/br-$s/models/gen-0048/model.json ] || { echo "needs data/exp/br-$s at generation 48 (branches.sh)" >&2; exit 1; }
done
[ -f data/exp/soup6-g48/model.json ] || "$C" average --out data/exp/soup6-g48 \
  models/g168-m3-on48 models/g168-on48 models/g168-m3-on48-s2 models/g168-on48-s2 \
  data/exp/br-9986/models/gen-0048 data/exp/br-9987/models/gen-0048
[ -f data/exp/soup2n-g48/model.json ] || "$C" average --out data/exp/soup2n-g48 \
  data/exp/br-9986/models/gen-0048 data/exp/br-9987/models/gen-0048
SETS="9990 9991 9992 9993 9994 9995 9996 9997"
R=docs/results/scripts-2026-11-30e/rate-vs-ab.sh
$R data/exp/soup6-g48 soup6-g48 $SETS
$R models/pocket-copper soup4-shipped $SETS
$R data/exp/soup2n-g48 soup2n-g48 $SETS
$R data/exp/br-9986/models/gen-0048 br-9986-g48 $SETS
$R data/exp/br-9987/models/gen-0048 br-9987-g48 $SETS
