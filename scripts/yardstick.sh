#!/usr/bin/env bash
# Builds the fixed yardstick of the learning issue: `copper` as of commit 22f6e77, whose
# alpha-beta (`alphabeta,movetime=100`) and shipped model are the targets strength claims
# are measured against, so that later speed-ups of today's alpha-beta do not move them.
# Built once per machine into a cache outside the checkout (like install-garage.sh):
#   ${COPPER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/copper-tools}/yardstick-22f6e77/copper
# Play its alpha-beta as a USI engine, and the shipped model of that commit from its tree:
#   Y=$(scripts/yardstick.sh --path)
#   copper arena ... -p "usi:$Y,arg=usi,arg=-v,arg=pocket-copper,arg=--player,arg=alphabeta,movetime=100,name=ab-22f6e77" \
#     -p "checkpoint:$(dirname "$Y")/src/models/pocket-copper,movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000,name=shipped-22f6e77"
# `yardstick.sh --path` prints where the binary is (or would be) and builds nothing.
set -euo pipefail
commit=22f6e77
root="${COPPER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/copper-tools}/yardstick-$commit"
bin="$root/copper"
if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  exit 0
fi
if [ -x "$bin" ]; then
  exit 0
fi
cd "$(dirname "$0")/.."
git cat-file -e "$commit^{commit}" 2>/dev/null || { echo "yardstick: commit $commit is not in this clone (fetch its history)" >&2; exit 1; }
echo "building copper at $commit into $root (once per machine)"
mkdir -p "$root"
src="$root/src"
rm -rf "$src"
mkdir -p "$src"
git archive "$commit" | tar -x -C "$src"
CARGO_TARGET_DIR="$root/target" cargo build --release --locked -p cli --manifest-path "$src/Cargo.toml" --quiet
# The binary finds its shipped models in the tree it was built from ($src/models, kept):
# `copper usi -v pocket-copper` there plays models/pocket-copper as of the commit.
cp "$root/target/release/copper" "$bin.tmp"
mv "$bin.tmp" "$bin"
rm -rf "$root/target"
"$bin" --version
