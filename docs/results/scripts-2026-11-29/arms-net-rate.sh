#!/bin/bash
# Issue 47, the network-size arms at equal CPU: the 6x64's generation 8 (~1,950 CPU-s of
# self-play and training from its distilled start) against the 4x48's generation 14 (the
# same CPU), at 100 ms a move, one thread each, colours paired, 4 random plies.
cd /work/main
while [ ! -f data/exp/net4x48/models/gen-0014.manifest.json ] || [ ! -f data/exp/ship-i8_models_gen-0072-7103/done ]; do sleep 15; done
sleep 20
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000
for seed in 7721 7722; do
  out=data/exp/arms-net-100ms-s$seed
  [ -f $out/summary.json ] && continue
  nice -n -10 data/exp/copper-i8 arena -v pocket-copper --mode match --rounds 32 --random-plies 4 --seed $seed --threads 2 \
    -p checkpoint:data/exp/net6x64/models/gen-0008,$T,name=n6x64-g8 -p checkpoint:data/exp/net4x48/models/gen-0014,$T,name=n4x48-g14 \
    --out $out > $out.log 2>&1
done
echo done $(date +%T)
