#!/bin/bash
# Issue 47: the README's command with selfplay.precision = "int8", its teacher stage and
# generation 0 copied from the README's run (data/exp/c64: the same config and seed, so the
# same games and steps), self-play generations 1..72 in int8; started after the net arms'
# equal-time match so that the match has the cores.
cd /work/main
D=data/exp/s8
if [ ! -d $D ]; then
  mkdir -p $D.tmp/selfplay $D.tmp/models
  cp -r data/exp/c64/teacher $D.tmp/
  cp -r data/exp/c64/selfplay/gen-0000 $D.tmp/selfplay/
  cp -r data/exp/c64/models/gen-0000 data/exp/c64/models/gen-0000.manifest.json $D.tmp/models/
  sed -e "s|^run_dir = .*|run_dir = \"$D\"|" -e 's|^precision = "f32"|precision = "int8"|' configs/default.toml > $D.tmp/config.toml
  mv $D.tmp $D
fi
while ! grep -q done data/exp/arms-net-rate.out 2>/dev/null; do sleep 15; done
/usr/bin/time -v nice -n 10 data/exp/copper-i8 train --config $D/config.toml --quiet >> data/exp/s8.log 2>&1
