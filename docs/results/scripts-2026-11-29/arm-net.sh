#!/bin/bash
# Issue 47, the larger network at equal CPU: self-play on from the distilled 6x64 and
# the distilled 4x48 (both trained fresh for 16,000 steps on generations 57..72 of the
# README's run, data/exp/distill16k-*), the default config otherwise, the teacher's games
# kept (copied from c64, not replayed). Each arm's CPU time is in its log (train.json,
# selfplay summaries); rated afterwards at 100 ms against the shipped model.
set -euo pipefail
cd /work/main
C=data/exp/copper-b3
arm() {
  local name=$1 shape=$2 gens=$3
  local dir=data/exp/$name
  local model=data/exp/distill16k-$shape/model
  [ -f data/exp/distill16k-$shape/model/model.json ] || { echo "no $model yet"; return 1; }
  if [ ! -d $dir ]; then
    mkdir -p $dir.tmp/selfplay
    cp -r data/exp/c64/teacher $dir.tmp/teacher
    cp -r data/exp/c64/selfplay/gen-0000 $dir.tmp/selfplay/gen-0000
    sed -e "s|^run_dir = .*|run_dir = \"$dir\"|" -e "s|^blocks = .*|blocks = ${shape%x*}|" -e "s|^channels = .*|channels = ${shape#*x}|" \
      data/exp/c64/config.toml > $dir.tmp/arm.toml
    mv $dir.tmp $dir
  fi
  echo "$(date +%T) train $name to $gens"
  /usr/bin/time -v nice -n 10 $C train --config $dir/arm.toml --from-model $model --keep-teacher --generations $gens --quiet >> data/exp/$name.log 2>&1
}
# `arm-net.sh [G6 [G4]]` runs both, one after the other (as first run); `ONLY=4x48
# arm-net.sh G4` (or `ONLY=6x64 … G6`) one of them, so that the two can run side by side
# (as on 2026-11-29, the 4x48 to generation 20, stopped at 14).
case ${ONLY:-} in
  4x48) arm net4x48 4x48 ${1:-20} ;;
  6x64) arm net6x64 6x64 ${1:-8} ;;
  *) arm net6x64 6x64 ${1:-8}; arm net4x48 4x48 ${2:-20} ;;
esac
echo "$(date +%T) done"
