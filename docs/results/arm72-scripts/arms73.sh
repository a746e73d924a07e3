#!/bin/bash
# Second-seed repeats of the fsf50 lead and its control, and a c_scale arm: each from gen 64 of the
# README's run, 8 generations, then gen 72 against gen 64 at 100 sims (seeds 7101-7102, as arms72).
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
arm fsf50s2 seed=2 full_search_fraction=0.5
arm c64s2 seed=2
arm cs025 c_scale=0.25
echo "$(date +%T) done"
