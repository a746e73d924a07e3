#!/bin/bash
cd /work/main
until cut -f1 data/exp/shogi-rise/summary.tsv | grep -qx 24; do sleep 10; done
sleep 5
pkill -f "shogi-rise.sh"
pkill -f "train --config data/exp/shogi-rise.toml"
sleep 5
nice -n 10 /usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/shogi-rise-ladder.time \
    data/exp/copper-keep ladder --run data/exp/shogi-rise --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
      --anchor usi:/usr/games/fairy-stockfish,nodes=1000,name=fsf-1k --sims 100 --rounds 16 --every 4 \
      --quiet > data/exp/shogi-rise-ladder.log 2>&1
touch data/exp/shogi-rise-ladder.done
