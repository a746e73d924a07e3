#!/usr/bin/env bash
# Issue 47, arms from the shipped model: a model against its start (the README run's
# generation 168, `models/pocket-copper` of 7c926c8, copied to data/exp/anchor-g168) at
# 100 ms a move, one thread each, both in int8 as `copper usi` plays,
# `mate=on,mate3=all,qmix=0.5,qscale=1000`, colours paired, 4 random plies, 32 games a set.
# Usage: rate-vs-g168.sh MODEL_DIR NAME SEED... (run alone on an idle machine; resumable)
# OPP (a player spec) and OUT (the tables' prefix) play another opponent: rate-vs-ab.sh.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
MODEL=$1 NAME=$2
shift 2
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000,precision=int8
OPP=${OPP:-checkpoint:data/exp/anchor-g168,$T,name=g168}
OUT=${OUT:-data/exp/rate100ms}
for s in "$@"; do
  out=$OUT-$NAME/s$s
  [ -f "$out/done" ] && continue
  "$C" arena -v pocket-copper --mode gauntlet --rounds 16 --random-plies 4 --seed "$s" --threads 2 \
    -p "checkpoint:$MODEL,$T,name=$NAME" -p "$OPP" --out "$out"
  touch "$out/done"
done
