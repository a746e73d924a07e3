#!/bin/bash
# Issue 47: standard shogi's self-play run from the shipped model (`shogi-rise`), generation 24,
# at 100 ms a move (one thread each, `mate=on,mate3=all,qmix=0.5,qscale=1000`, colours paired,
# 4 random plies) against Fairy-Stockfish at 100 ms (seeds 9904-9905) and against the
# shipped shogi model of its day (seeds 9906-9913), 32 games a set; run alone on an idle
# machine, from the repository root (C: the copper binary; MODEL: generation 24's directory;
# OLD: the model it was measured against, models/shogi until it replaced it). Resumable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
MODEL=${MODEL:-data/exp/shogi-rise/models/gen-0024}
OLD=${OLD:-models/shogi-fsf-teacher}
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000
# play OUT SEED OPPONENT_SPEC: one set of 32 games, skipped when already done.
play() {
  [ -f $1/done ] && return
  $C arena -v shogi --mode gauntlet --rounds 16 --random-plies 4 --seed $2 --threads 2 \
    -p "checkpoint:$MODEL,$T,name=shogi-g24" -p "$3" --out $1
  touch $1/done
}
for s in 9904 9905; do
  play data/exp/shogi-g24-fsf100-s$s $s "usi:/usr/games/fairy-stockfish,movetime=100,name=fsf-100ms"
done
for s in 9906 9907 9908 9909 9910 9911 9912 9913; do
  play data/exp/shogi-g24-ship100-s$s $s "checkpoint:$OLD,$T,name=shogi-shipped"
done
