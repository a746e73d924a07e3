#!/usr/bin/env bash
# Issue 47: a model against the yardstick alpha-beta (`alphabeta,movetime=100` of commit 22f6e77,
# built by scripts/yardstick.sh and played as a USI engine) at 100 ms a move, one thread each,
# the model in int8 as `copper usi` plays, `mate=on,mate3=all,qmix=0.5,qscale=1000`, colours
# paired, 4 random plies, 32 games a set.
# Usage: rate-vs-ab.sh MODEL_DIR NAME SEED... (run alone on an idle machine; resumable)
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-grow}
Y=$(bash scripts/yardstick.sh --path)
MODEL=$1 NAME=$2
shift 2
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000,precision=int8
for s in "$@"; do
  out=data/exp/ab100ms-$NAME/s$s
  [ -f "$out/done" ] && continue
  "$C" arena -v pocket-copper --mode match --rounds 16 --random-plies 4 --seed "$s" --threads 2 \
    -p "checkpoint:$MODEL,$T,name=$NAME" \
    -p "usi:$Y,arg=usi,arg=-v,arg=pocket-copper,arg=--player,arg=alphabeta,movetime=100,name=ab-22f6e77" --out "$out"
  touch "$out/done"
done
