#!/usr/bin/env bash
# Issue 47, "The search that writes the targets": the shipped model (README run gen 168, copied to
# data/exp/anchor-g168) against itself at self-play's full budget, 64 simulations, Gumbel root,
# int8, one search setting changed at a time; gauntlets of `q50` (mate=on,qmix=0.5,qscale=1000),
# colours paired, 4 random plies, 32 games a pairing a set. Then the shipped standard shogi model
# with and without the three-ply mate check. Fixed simulations: the machine's load does not matter.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
M=checkpoint:data/exp/anchor-g168,sims=64,mate=on,qscale=1000,precision=int8
play() { # OUT SEED VARIANT THREADS PLAYER...
  local out=$1 seed=$2 variant=$3 threads=$4
  shift 4
  [ -f "$out/done" ] && return
  local players=()
  for p in "$@"; do players+=(-p "$p"); done
  "$C" arena -v "$variant" --mode gauntlet --rounds 16 --random-plies 4 --seed "$seed" --threads "$threads" "${players[@]}" --out "$out"
  touch "$out/done"
}
for s in 9924 9925 9926 9927; do
  play data/exp/qmix-play/s$s $s pocket-copper 2 "$M,qmix=0.5,name=q50" "$M,qmix=0,name=q0" "$M,qmix=0.25,name=q25"
done
for s in 9928 9929 9930 9931; do
  play data/exp/qmix-play/b$s $s pocket-copper 2 "$M,qmix=0.5,name=q50" "$M,qmix=0.75,name=q75" "$M,qmix=1,name=q100"
done
for s in 9932 9933 9934 9935; do
  play data/exp/qmix-play/c$s $s pocket-copper 2 "$M,qmix=0.5,name=q50" "$M,mate3=all,qmix=0.5,name=m3"
done
G=checkpoint:models/shogi,sims=64,qmix=0.5,qscale=1000,precision=int8
for s in 9936 9937; do
  play data/exp/m3-shogi-play/s$s $s shogi 1 "$G,mate=on,name=m1" "$G,mate3=all,name=m3"
done
