#!/bin/bash
# One arm of docs/ABLATIONS.md ("Reanalysis"), run from the repository root:
#   C=BINARY arm-fm.sh NAME [KEY=VALUE ...]
# On a machine without the README's run directory: 8 generations of the default config from
# the README run's generation-64 model (models/default-scratch-g64, `--from-model`: a fresh
# window and optimiser), each KEY set (its first line in the config; appended after
# search_value_share if absent); then generation 8 against that model at 100 simulations
# (seeds 8101, 8102: 2 × 128 games) and against the shipped model of commit 22f6e77
# (seed 8103, 128 games). Resumable: finished steps are skipped.
set -euo pipefail
C=${C:-data/exp/copper-re}
name=$1; shift
dir=data/exp/$name
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
mkdir -p data/exp
if [ ! -f data/exp/$name.toml ]; then
  sed -e "s|^run_dir = .*|run_dir = \"$dir\"|" -e "s|^generations = .*|generations = 8|" configs/default.toml > data/exp/$name.toml.tmp
  for kv in "$@"; do
    k=${kv%%=*}; v=${kv#*=}
    if grep -q "^$k = " data/exp/$name.toml.tmp; then
      sed -i -e "0,/^$k = /s|^$k = [^#]*|$k = $v   |" data/exp/$name.toml.tmp
    else
      sed -i -e "/^search_value_share = /a $k = $v" data/exp/$name.toml.tmp
    fi
    grep -q "^$k = $v " data/exp/$name.toml.tmp
  done
  mv data/exp/$name.toml.tmp data/exp/$name.toml
fi
/usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/$name.time \
  $C train --config data/exp/$name.toml --from-model models/default-scratch-g64 --quiet >> data/exp/$name.log 2>&1
if [ ! -d data/exp/shipped-22f6e77 ]; then
  mkdir -p data/exp/shipped-22f6e77
  for f in $(git ls-tree --name-only 22f6e77 models/pocket-copper/); do git show 22f6e77:$f > data/exp/shipped-22f6e77/$(basename $f); done
fi
play() {  # OUT SEED OPPONENT_DIR OPPONENT_NAME
  [ -f $1/done ] && return
  $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $2 --threads 2 \
    -p checkpoint:$dir/models/gen-0008,$M,name=$name-g8 -p checkpoint:$3,$M,name=$4 --out $1 > $1.log 2>&1
  touch $1/done
}
play data/exp/eval8-$name-8101 8101 models/default-scratch-g64 g64
play data/exp/eval8-$name-8102 8102 models/default-scratch-g64 g64
play data/exp/ship8-$name-8103 8103 data/exp/shipped-22f6e77 shipped
