#!/bin/bash
# The network's price at 1:1 (issue 50 item 3): sims 100 against 100 at the seed start, 600 games.
cd /work/main
SF=data/exp/sf72/models/gen-0088
N=mate=on,qmix=0.5,qscale=1000,noise=1
out=data/exp/price-net-sf88-100-100
[ -f $out/done ] && exit 0
nice -n 10 data/exp/copper-b3 arena -v pocket-copper --mode match --rounds 300 --starts seed --seed 7511 --threads 1 \
  -p checkpoint:$SF,sims=100,$N,name=sf100 -p checkpoint:$SF,sims=100,$N,name=sf100-w \
  --out $out > $out.log 2>&1 && touch $out/done
