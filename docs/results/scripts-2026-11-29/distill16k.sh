#!/bin/bash
# Capacity at length (issue 47 item 2): fresh 6x64 then 4x48 on generations 57..72 of the
# README's run (c64), 16,000 steps each, same schedule; the 6x64 is the larger-network arm's start.
cd /work/main
for n in 6x64 4x48; do
  nice -n 10 data/exp/copper-b3 distill --run data/exp/c64 --generations 57..72 --network $n --steps 16000 --report-every 1000 --out data/exp/distill16k-$n --quiet > data/exp/distill16k-$n.log 2>&1
done
