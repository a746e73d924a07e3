#!/usr/bin/env bash
# Issue 47: a model against the yardstick alpha-beta (`alphabeta,movetime=100` of commit 22f6e77,
# built by scripts/yardstick.sh and played as a USI engine) at 100 ms a move, as rate-vs-g168.sh
# plays its start (the model in int8, one thread each, colours paired, 4 random plies, sets of 32).
# Usage: rate-vs-ab.sh MODEL_DIR NAME SEED... (run alone on an idle machine; resumable)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/yardstick.sh
Y=$(bash scripts/yardstick.sh --path)
OPP="usi:$Y,arg=usi,arg=-v,arg=pocket-copper,arg=--player,arg=alphabeta,movetime=100,name=ab-22f6e77" OUT=data/exp/ab100ms \
  exec docs/results/scripts-2026-11-30d/rate-vs-g168.sh "$@"
