#!/bin/bash
# Rates a generation of a run at 100 ms a move against the learning issue's yardstick
# alpha-beta (commit 22f6e77, scripts/yardstick.sh, played as a USI engine), on four
# disjoint opening sets of 32 games, after the machine's bench-selfplay rate (TODAY=1: today's
# alpha-beta too, a gauntlet); run alone on an idle machine, from the repository root:
#   rate-long.sh MODEL_DIR NAME [SEEDS...]     (default seeds 9101 9102 9103 9104)
# EXTRA=,precision=int8 adds to the rated player's spec (the network as `copper usi` runs it).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
model=$1; name=$2; shift 2
seeds=${*:-9101 9102 9103 9104}
Y=$(scripts/yardstick.sh --path)
[ -x "$Y" ] || scripts/yardstick.sh
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000${EXTRA:-}
out=data/exp/rate-$name
mkdir -p $out
[ -f $out/bench.txt ] || $C bench-selfplay --config configs/default.toml --model models/pocket-copper --games 32 > $out/bench.txt 2>&1
for s in $seeds; do
  [ -f $out/s$s/done ] && continue
  today=(); [ -n "${TODAY:-}" ] && today=(-p alphabeta,movetime=100,name=ab-today)
  $C arena -v pocket-copper --mode gauntlet --rounds 16 --random-plies 4 --seed $s --threads 2 \
    -p checkpoint:$model,$T,name=$name \
    -p "usi:$Y,arg=usi,arg=-v,arg=pocket-copper,arg=--player,arg=alphabeta,movetime=100,name=ab-22f6e77" \
    "${today[@]}" --out $out/s$s > $out/s$s.log 2>&1
  touch $out/s$s/done
done
