#!/bin/bash
# Standard shogi's self-play from the shipped model with what paid in Pocket Shogi Copper
# (issue 47, item 5), run from the repository root:
#   setsid nohup docs/results/scripts-2026-11-29d/shogi-rise.sh &
# configs/shogi.toml (the recipe of docs/ABLATIONS.md, "Standard shogi: the recipe from the
# shipped model") with 2,000 teacher games (as shogi-rc64), self-play in int8, and
# reanalysis (a tenth of the window a generation, half the old target kept); 32
# generations from models/shogi with --keep-teacher; then every 4th generation on a ladder
# at 100 simulations against fixed anchors (alpha-beta depths 2 and 3, Fairy-Stockfish at
# 1,000 nodes). Resumable: train resumes, the ladder (written to the run's ladder/) is skipped once done.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-keep}
name=${NAME:-shogi-rise}
dir=data/exp/$name
cfg=data/exp/$name.toml
if [ ! -f $cfg ]; then
  sed -e "s|^run_dir = .*|run_dir = \"$dir\"|" -e "s|^generations = .*|generations = 32|" \
      -e "s|^games = 11000 |games = 2000 |" \
      -e '/^search_value_share = /a reanalyse_fraction = 0.1 \nreanalyse_keep = 0.5 ' \
      -e '/^device = "cpu" .*self-play network/a precision = "int8" ' configs/shogi.toml > $cfg.tmp
  grep -q '^precision = "int8"' $cfg.tmp && grep -q '^games = 2000 ' $cfg.tmp
  grep -q '^reanalyse_fraction = 0.1 ' $cfg.tmp && grep -q '^reanalyse_keep = 0.5 ' $cfg.tmp
  mv $cfg.tmp $cfg
fi
/usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/$name.time \
  $C train --config $cfg --from-model models/shogi --keep-teacher --quiet >> data/exp/$name.log 2>&1
if [ ! -f data/exp/$name-ladder.done ]; then
  /usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/$name-ladder.time \
    $C ladder --run $dir --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
      --anchor usi:/usr/games/fairy-stockfish,nodes=1000,name=fsf-1k --sims 100 --rounds 16 --every 4 \
      --quiet > data/exp/$name-ladder.log 2>&1
  touch data/exp/$name-ladder.done
fi
