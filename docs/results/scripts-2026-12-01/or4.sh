#!/usr/bin/env bash
# Arms of "Random openings in self-play" (issue 47): self-play from the shipped soup, 16
# generations each, side by side and niced; resumable. Usage: or4.sh NAME... (configs
# docs/results/NAME.toml). Run as `or4.sh soup-or4 soup-or4-s2 soup-ctl-s2` (training seeds
# 9914 and 9962; seed 9914's control is soup-ctl, already run), then `or4.sh soup-or4-s3 soup-ctl-s3`.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
for name in "$@"; do
  [ -d data/exp/$name/models/gen-0016 ] || nice -n 10 "$C" train --config docs/results/$name.toml \
    --from-model models/pocket-copper --generations 16 >> data/exp/$name.log 2>&1 &
done
wait
