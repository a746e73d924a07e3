#!/bin/bash
# old vs new bench-selfplay, alternating; background paused.
P=$(pgrep -f "^data/exp/copper-(b3|psw) (balance|train|arena)")
kill -STOP $P
for i in 1 2 3; do
  for b in "$@"; do
    echo "== $b run $i"
    nice -n -10 $b bench-selfplay --config ${CONFIG:-configs/default.toml} --model models/pocket-copper --games 64 2>&1 | grep -E "simulations/s|outside|mate in one|quiescence|legal|replay|rest|positions/s"
  done
done
kill -CONT $P
