#!/bin/bash
# After arms73b.sh: arm fsf50s36 (half the moves fully searched at 36 simulations: the default's
# 22 simulations a move on average, fsf50's more policy targets at the default's cost), as arms73.sh;
# then arms vh8 and lr01, each also against the shipped model at 100 sims on seed 7103 (fixed anchor).
set -euo pipefail
cd /work/main
while pgrep -f "arms73b?.sh" >/dev/null; do sleep 20; done
C=data/exp/copper-arm
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
arm() {
  local name=$1; shift
  local dir=data/exp/$name
  if [ ! -d $dir ]; then
    cp -r data/runs/pocket-copper $dir.tmp
    sed -i -e "s|^run_dir = .*|run_dir = \"$dir\"|" $dir.tmp/config.toml
    for kv in "$@"; do
      k=${kv%%=*}; v=${kv#*=}
      sed -i -e "0,/^$k = /s|^$k = .*|$k = $v|" $dir.tmp/config.toml  # the first match: [selfplay] before [evaluation]
      grep -q "^$k = $v\$" $dir.tmp/config.toml
    done
    mv $dir.tmp $dir
  fi
  echo "$(date +%T) train $name" 
  $C train --config $dir/config.toml --generations 72 --quiet >> data/exp/$name.log 2>&1
  for seed in 7101 7102; do
    out=data/exp/eval72-$name-$seed
    [ -f $out/done ] && continue
    echo "$(date +%T) eval $name $seed"
    $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $seed --threads 2 \
      -p checkpoint:$dir/models/gen-0072,$M,name=$name-g72 \
      -p checkpoint:data/runs/pocket-copper/models/gen-0064,$M,name=g64 --out $out > $out.log 2>&1
    touch $out/done
  done
}
arm fsf50s36 full_search_fraction=0.5 simulations=36
out=data/exp/ship-fsf50s36_models_gen-0072-7103
if [ ! -f $out/done ]; then
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
    -p checkpoint:data/exp/fsf50s36/models/gen-0072,$M,name=cand -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
  touch $out/done
fi
# Arm vh8: the value target's search share from the search 8 plies later (training.value_horizon,
# commit in copper-h.commit; the binary differs from copper-arm only in that and in faster leaf checks).
if [ ! -d data/exp/vh8 ]; then
  cp -r data/runs/pocket-copper data/exp/vh8.tmp
  sed -i -e 's|^run_dir = .*|run_dir = "data/exp/vh8"|' -e '/^search_value_share = /a value_horizon = 8' data/exp/vh8.tmp/config.toml
  grep -q '^value_horizon = 8$' data/exp/vh8.tmp/config.toml
  mv data/exp/vh8.tmp data/exp/vh8
fi
C=data/exp/copper-h arm vh8
C=data/exp/copper-arm
for name in vh8; do
  out=data/exp/ship-${name}_models_gen-0072-7103
  [ -f $out/done ] && continue
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
    -p checkpoint:data/exp/$name/models/gen-0072,$M,name=cand -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
  touch $out/done
done
# Arm lr01: each generation's rate decays on a cosine to a tenth (training.final_lr_fraction = 0.1),
# so each generation's model is taken at a low rate, not where the last noisy step left it.
arm lr01 final_lr_fraction=0.1
out=data/exp/ship-lr01_models_gen-0072-7103
if [ ! -f $out/done ]; then
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
    -p checkpoint:data/exp/lr01/models/gen-0072,$M,name=cand -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
  touch $out/done
fi
echo "$(date +%T) done"
