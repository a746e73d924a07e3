#!/bin/bash
# One arm of docs/ABLATIONS.md ("Arms against the gap", "Second seeds"), run from the repository root:
#   C=BINARY arm.sh NAME [KEY=VALUE ...]
# copies the README's run at generation 64 (data/runs/pocket-copper) to data/exp/NAME, sets each
# KEY (its first line in config.toml; appended after search_value_share if absent), trains to
# generation 72, then plays gen 72 against gen 64 at 100 simulations (seeds 7101, 7102) and against
# the shipped model of commit 22f6e77 (seed 7103). Resumable: finished steps are skipped.
# The runs: c64 (no key); g384 games=384; u1 max_sample_uses=1; fsf50 full_search_fraction=0.5;
# c64s2 seed=2; c64s3 seed=3; fsf50s2 seed=2 full_search_fraction=0.5; cs025 c_scale=0.25;
# fsf50s36 full_search_fraction=0.5 simulations=36; lr01 final_lr_fraction=0.1;
# vh8 value_horizon=8 (C = a build of commit a5f961e or later). The others used commit 62c3b16.
set -euo pipefail
C=${C:-data/exp/copper-arm}
name=$1; shift
dir=data/exp/$name
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
if [ ! -d $dir ]; then
  cp -r data/runs/pocket-copper $dir.tmp
  sed -i -e "s|^run_dir = .*|run_dir = \"$dir\"|" $dir.tmp/config.toml
  for kv in "$@"; do
    k=${kv%%=*}; v=${kv#*=}
    if grep -q "^$k = " $dir.tmp/config.toml; then
      sed -i -e "0,/^$k = /s|^$k = .*|$k = $v|" $dir.tmp/config.toml   # [selfplay]/[training] come before [evaluation]/[teacher]
    else
      sed -i -e "/^search_value_share = /a $k = $v" $dir.tmp/config.toml
    fi
    grep -q "^$k = $v\$" $dir.tmp/config.toml
  done
  mv $dir.tmp $dir
fi
$C train --config $dir/config.toml --generations 72 --quiet >> data/exp/$name.log 2>&1
if [ ! -d data/exp/shipped-22f6e77 ]; then
  mkdir -p data/exp/shipped-22f6e77
  for f in $(git ls-tree --name-only 22f6e77 models/pocket-copper/); do git show 22f6e77:$f > data/exp/shipped-22f6e77/$(basename $f); done
fi
play() {  # OUT SEED OPPONENT_DIR OPPONENT_NAME
  [ -f $1/done ] && return
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $2 --threads 2 \
    -p checkpoint:$dir/models/gen-0072,$M,name=$name-g72 -p checkpoint:$3,$M,name=$4 --out $1 > $1.log 2>&1
  touch $1/done
}
play data/exp/eval72-$name-7101 7101 data/runs/pocket-copper/models/gen-0064 g64
play data/exp/eval72-$name-7102 7102 data/runs/pocket-copper/models/gen-0064 g64
play data/exp/ship-${name}_models_gen-0072-7103 7103 data/exp/shipped-22f6e77 shipped
