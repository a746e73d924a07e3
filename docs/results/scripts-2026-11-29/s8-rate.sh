#!/bin/bash
# Issue 47: the README's command in int8 (run s8), its generation 72 at 100 ms a move, one
# thread each, colours paired, 4 random plies, against the shipped model of commit 22f6e77
# (4 disjoint sets of 32 games) and the yardstick alpha-beta of that commit (2 sets of 32).
cd /work/main
while [ ! -f data/exp/s8/models/gen-0072.manifest.json ] || pgrep -f "s8/config.toml" > /dev/null; do sleep 15; done
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000
Y=$(bash scripts/yardstick.sh --path)
for seed in 7731 7732 7733 7734; do
  out=data/exp/s8-g72-vs-shipped-100ms-s$seed
  [ -f $out/summary.json ] && continue
  nice -n -10 data/exp/copper-i8 arena -v pocket-copper --mode match --rounds 16 --random-plies 4 --seed $seed --threads 2 \
    -p checkpoint:data/exp/s8/models/gen-0072,$T,name=s8-g72 -p checkpoint:data/exp/shipped-22f6e77,$T,name=shipped --out $out > $out.log 2>&1
done
for seed in 7741 7742; do
  out=data/exp/s8-g72-vs-ab-100ms-s$seed
  [ -f $out/summary.json ] && continue
  nice -n -10 data/exp/copper-i8 arena -v pocket-copper --mode match --rounds 16 --random-plies 4 --seed $seed --threads 2 \
    -p checkpoint:data/exp/s8/models/gen-0072,$T,name=s8-g72 \
    -p "usi:$Y,arg=usi,arg=-v,arg=pocket-copper,arg=--player,arg=alphabeta,movetime=100,name=ab-22f6e77" --out $out > $out.log 2>&1
done
echo done $(date +%T)
