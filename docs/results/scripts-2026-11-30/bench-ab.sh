#!/bin/bash
# Issue 53: two builds' `bench-selfplay` in one run, alternating, three runs each, with a
# training job paused (kill -STOP) while they run; then the same for perft on one pinned
# core (seven runs each). From the repository root:
#   bench-ab.sh OLD_BINARY NEW_BINARY OUT [OLD_CONFIG NEW_CONFIG]
# Configs default to configs/default.toml for both. Against 2d31e30 (built from its tree
# with `git worktree add` and its own target dir) the old build took its own
# configs/default.toml and the new one configs/default.toml with
# `precision = "f32"` (sed 's/^precision = "int8"/precision = "f32" /').
set -euo pipefail
cd "$(dirname "$0")/../../.."
old=$1; new=$2; out=$3
oc=${4:-configs/default.toml}; nc=${5:-configs/default.toml}
P=$(pgrep -f " train " || true)
[ -n "$P" ] && kill -STOP $P
trap '[ -n "$P" ] && kill -CONT $P' EXIT
: > "$out"
for i in 1 2 3; do
  echo "== $old run $i" >> "$out"; nice -n -5 "$old" bench-selfplay --config "$oc" --model models/pocket-copper --games 32 >> "$out" 2>&1
  echo "== $new run $i" >> "$out"; nice -n -5 "$new" bench-selfplay --config "$nc" --model models/pocket-copper --games 32 >> "$out" 2>&1
done
echo "== perft (s, wall incl. process start), taskset -c 1, nice -10, alternating" >> "$out"
for i in 1 2 3 4 5 6 7; do
  for b in "$old" "$new"; do
    for vd in "shogi 5" "pocket-copper 4"; do
      s=$(date +%s.%N); taskset -c 1 nice -n -10 "$b" perft -v $vd > /dev/null 2>&1; e=$(date +%s.%N)
      echo "$b ${vd// /-} $(echo "$e - $s" | bc)" >> "$out"
    done
  done
done
