#!/bin/bash
# psws128 with seed 2: train 8 generations, then only the fixed anchor (shipped, seed 7103).
cd /work/main
C=data/exp/copper-psw
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
$C train --config data/exp/psws128s2/config.toml --generations 72 --quiet >> data/exp/psws128s2.log 2>&1
out=data/exp/ship-psws128s2_models_gen-0072-7103
$C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
  -p checkpoint:data/exp/psws128s2/models/gen-0072,$M,name=psws128s2-g72 -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
touch $out/done
