#!/bin/bash
# After arms73.sh: each arm's gen 72 against the shipped model (22f6e77) at 100 sims on seed 7103,
# the openings generation 64 (66/128) and c64's gen 72 (71/128) played.
set -euo pipefail
cd /work/main
while pgrep -f arms73.sh >/dev/null; do sleep 20; done
C=data/exp/copper-arm
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
for who in fsf50 fsf50s2 c64s2 cs025; do
  out=data/exp/ship-${who}_models_gen-0072-7103
  [ -f $out/done ] && continue
  echo "$(date +%T) ship $who"
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
    -p checkpoint:data/exp/$who/models/gen-0072,$M,name=cand -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
  touch $out/done
done
echo "$(date +%T) done"
