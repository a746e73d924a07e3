#!/bin/bash
# Weight averaging (copper average): the mean of c64's gens 69-72 and of 65-72 against c64's gen 72 alone,
# head to head at 100 sims, seeds 7104-7105 (fresh), 128 games each.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
C=data/exp/copper-h
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
for mean in mean-69-72 mean-65-72; do
for seed in 7104 7105; do
  out=data/exp/swa-c64-$mean-$seed
  [ -f $out/done ] && continue
  echo "$(date +%T) $mean $seed"
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $seed --threads 2 \
    -p checkpoint:data/exp/c64/models/$mean,$M,name=$mean -p checkpoint:data/exp/c64/models/gen-0072,$M,name=g72 --out $out > $out.log 2>&1
  touch $out/done
done
done
echo "$(date +%T) done"
