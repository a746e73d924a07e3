#!/bin/bash
# After long-re's training (long-re.sh, its ladder step replaced): generation 32 at 100 ms
# against the yardstick alpha-beta first, while the machine is otherwise idle, then the
# ladder at 100 simulations (no time limit: other work may run beside it).
cd "$(dirname "$0")/../../.."
while pgrep -f "train --config data/exp/long-re.toml" > /dev/null; do sleep 10; done
# and the standard shogi run's ladder (shogi-stop24.sh), so that the timed games run alone
while pgrep -f "ladder --run data/exp/shogi-rise" > /dev/null; do sleep 10; done
last=$(ls -d data/exp/long-re/models/gen-0[0-9][0-9][0-9] | sort | tail -n 1)
C=target/release/copper docs/results/scripts-2026-11-29d/rate-long.sh $last long-re-$(basename $last) 9101 9102 9103 9104
C=data/exp/copper-keep
/usr/bin/time -f "%e s wall, %U s user, %S s system" -a -o data/exp/long-re-ladder.time \
  nice -n 10 $C ladder --run data/exp/long-re --anchor alphabeta,depth=2 --anchor alphabeta,depth=3 \
    --anchor "checkpoint:models/pocket-copper,sims=100,mate=on,qmix=0.5,qscale=1000,name=shipped" \
    --sims 100 --rounds 8 --every 4 --quiet > data/exp/long-re-ladder.log 2>&1
touch data/exp/long-re-ladder.done
