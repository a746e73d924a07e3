#!/usr/bin/env bash
# Arms of "Random openings in self-play" (issue 47): self-play from the shipped soup, 16
# generations each, side by side and niced; resumable. Usage: or4.sh NAME... Each config is
# docs/results/soup-ctl.toml with its run_dir, training seed and opening_random_plies set by
# NAME: soup-or4 (4, seed 9914), soup-or4-s2 / soup-ctl-s2 (4 / 0, seed 9962), soup-or4-s3 /
# soup-ctl-s3 (4 / 0, seed 9988); written to data/exp/NAME.toml. Run as
# `or4.sh soup-or4 soup-or4-s2 soup-ctl-s2` (seed 9914's control is soup-ctl, already run),
# then `or4.sh soup-or4-s3 soup-ctl-s3`.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
mkdir -p data/exp
for name in "$@"; do
  case $name in
    soup-or4) seed=9914 k=4 ;; soup-or4-s2) seed=9962 k=4 ;; soup-ctl-s2) seed=9962 k=0 ;;
    soup-or4-s3) seed=9988 k=4 ;; soup-ctl-s3) seed=9988 k=0 ;; *) echo "unknown arm $name" >&2; exit 2 ;;
  esac
  sed -e "s|^run_dir = .*|run_dir = \"data/exp/$name\"|" -e "s|^seed = .*|seed = $seed|" -e "s|^generations = .*|generations = 16|" \
    -e "s|^starts = \[\].*|&\nopening_random_plies = $k|" docs/results/soup-ctl.toml > data/exp/$name.toml
  [ -d data/exp/$name/models/gen-0016 ] || nice -n 10 "$C" train --config data/exp/$name.toml \
    --from-model models/pocket-copper --generations 16 >> data/exp/$name.log 2>&1 &
done
wait
