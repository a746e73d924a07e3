#!/bin/bash
# Issue 47: a model against the shipped model of commit 22f6e77 (the issue's fixed
# yardstick, kept as data/exp/shipped-22f6e77) at 100 ms a move, both with the shipped
# players' settings, one thread each, colours paired, 4 random plies, four disjoint
# opening sets of 32 games; run alone on an idle machine, from the repository root:
#   rate-h2h.sh MODEL_DIR NAME SEEDS...
# OPP=DIR,NAME plays another model instead (e.g. OPP=models/pocket-copper,shipped-now);
# EXTRA=,precision=int8 adds to both players' specs (the network as `copper usi` runs it).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
model=$1; name=$2; shift 2
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000${EXTRA:-}
opp=${OPP:-data/exp/shipped-22f6e77,shipped}
out=data/exp/h2h-$name
mkdir -p $out
[ -f $out/bench.txt ] || $C bench-selfplay --config configs/default.toml --model models/pocket-copper --games 32 > $out/bench.txt 2>&1
for s in "$@"; do
  [ -f $out/s$s/done ] && continue
  $C arena -v pocket-copper --mode gauntlet --rounds 16 --random-plies 4 --seed $s --threads 2 \
    -p checkpoint:$model,$T,name=$name \
    -p checkpoint:${opp%%,*},$T,name=${opp#*,} \
    --out $out/s$s > $out/s$s.log 2>&1
  touch $out/s$s/done
done
