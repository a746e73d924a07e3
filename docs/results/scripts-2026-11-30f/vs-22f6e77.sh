#!/usr/bin/env bash
# Issue 47: the shipped soup against the issue's other fixed yardstick, the model shipped in
# commit 22f6e77 (from the tree scripts/yardstick.sh unpacks), at 100 ms a move as rate-vs-g168.sh
# plays (both int8, one thread each, colours paired, 4 random plies), four fresh sets.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/yardstick.sh
Y=$(bash scripts/yardstick.sh --path)
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000,precision=int8
OPP="checkpoint:$(dirname "$Y")/src/models/pocket-copper,$T,name=shipped-22f6e77" OUT=data/exp/fixed100ms \
  exec docs/results/scripts-2026-11-30d/rate-vs-g168.sh models/pocket-copper soup4 9986 9987 9988 9989
