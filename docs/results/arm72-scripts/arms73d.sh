#!/bin/bash
# A third seed of the control (c64s3), as arms73.sh: how far one seed's 8 generations move.
set -euo pipefail
cd /work/main
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
      sed -i -e "s|^$k = .*|$k = $v|" $dir.tmp/config.toml
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
arm c64s3 seed=3
out=data/exp/ship-c64s3_models_gen-0072-7103
if [ ! -f $out/done ]; then
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed 7103 --threads 2 \
    -p checkpoint:data/exp/c64s3/models/gen-0072,$M,name=cand -p checkpoint:data/exp/shipped-22f6e77,$M,name=shipped --out $out > $out.log 2>&1
  touch $out/done
fi
echo "$(date +%T) done"
