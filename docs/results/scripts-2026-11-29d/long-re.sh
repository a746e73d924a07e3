#!/bin/bash
# Issue 47: does reanalysis lift the plateau over a longer run? Run from the repository root:
#   setsid nohup docs/results/scripts-2026-11-29d/long-re.sh &
# Waits for the reanalysis arms (scripts-2026-11-29c/after-balance.sh), then 32 generations of
# configs/default.toml (int8 self-play) with reanalyse_fraction = 0.1 (targets replaced, as
# `fmre`: averaging them, `fmrek2`, scored below it on its second seed) from the README
# run's generation 72 (models/default-scratch-g72, --from-model: a fresh window and
# optimiser, no teacher games, as the arms of docs/ABLATIONS.md), then every 4th
# generation on the README run's ladder (100 simulations; alpha-beta depths 2 and 3 and
# the shipped model as anchors). Resumable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-keep}
name=${NAME:-long-re}
dir=data/exp/$name
cfg=data/exp/$name.toml
while pgrep -f "after-balance.sh" > /dev/null; do sleep 30; done
if [ ! -f $cfg ]; then
  sed -e "s|^run_dir = .*|run_dir = \"$dir\"|" -e "s|^generations = .*|generations = 32|" \
      -e "s|^reanalyse_fraction = [^#]*|reanalyse_fraction = 0.1   |" configs/default.toml > $cfg.tmp
  grep -q '^reanalyse_fraction = 0.1 ' $cfg.tmp && grep -q '^reanalyse_keep = 0.0 ' $cfg.tmp
  grep -q '^precision = "int8"' $cfg.tmp
  mv $cfg.tmp $cfg
fi
/usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/$name.time \
  $C train --config $cfg --from-model models/default-scratch-g72 --quiet >> data/exp/$name.log 2>&1
if [ ! -f data/exp/$name-ladder.done ]; then
  /usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/$name-ladder.time \
    $C ladder --run $dir --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
      --anchor "checkpoint:models/pocket-copper,sims=100,mate=on,qmix=0.5,qscale=1000,name=shipped" \
      --sims 100 --rounds 8 --every 4 --quiet > data/exp/$name-ladder.log 2>&1
  touch data/exp/$name-ladder.done
fi
