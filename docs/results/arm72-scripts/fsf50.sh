#!/bin/bash
# Arm fsf50 from gen 64 of the README's run (full_search_fraction 0.5), 8 gens, then gen 72 against gen 64 at 100 sims (seeds 7101-7102).
set -euo pipefail
cd /work/main
C=data/exp/copper-arm
name=fsf50
dir=data/exp/$name
if [ ! -d $dir ]; then
  cp -r data/runs/pocket-copper $dir.tmp
  sed -i -e "s|^run_dir = .*|run_dir = \"$dir\"|" -e 's|^full_search_fraction = .*|full_search_fraction = 0.5|' $dir.tmp/config.toml
  grep -q '^full_search_fraction = 0.5$' $dir.tmp/config.toml
  mv $dir.tmp $dir
fi
$C train --config $dir/config.toml --generations 72 --quiet >> data/exp/$name.log 2>&1
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
for seed in 7101 7102; do
  out=data/exp/eval72-$name-$seed
  [ -f $out/done ] && continue
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $seed --threads 2 \
    -p checkpoint:$dir/models/gen-0072,$M,name=$name-g72 \
    -p checkpoint:data/runs/pocket-copper/models/gen-0064,$M,name=g64 --out $out > $out.log 2>&1
  touch $out/done
done
