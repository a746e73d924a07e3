#!/bin/bash
# Evaluations of the arms of arms72.sh: each arm's generation 72 against generation 64 at 100 simulations.
set -euo pipefail
cd /work/main
C=data/exp/copper-arm
BASE=data/runs/pocket-copper
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
ev() {
  local name=$1
  for seed in 7101 7102; do
    out=data/exp/eval72-$name-$seed
    [ -f $out/done ] && continue
    $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $seed --threads 2 \
      -p checkpoint:data/exp/$name/models/gen-0072,$M,name=$name-g72 \
      -p checkpoint:$BASE/models/gen-0064,$M,name=g64 --out $out > $out.log 2>&1
    touch $out/done
  done
}
ev c64
ev g384
while pgrep -f "u1/config.toml" >/dev/null; do sleep 10; done
ev u1
