#!/usr/bin/env bash
# Arms soup-or4, soup-or4-s2 and the control soup-ctl-s2 (issue 47): self-play from the shipped
# soup, 16 generations each, with and without 0..=4 random opening plies, training seeds 9914
# (its control is soup-ctl, already run) and 9962; the three side by side, niced; resumable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
for name in soup-or4 soup-or4-s2 soup-ctl-s2; do
  [ -d data/exp/$name/models/gen-0016 ] || nice -n 10 "$C" train --config docs/results/$name.toml \
    --from-model models/pocket-copper --generations 16 >> data/exp/$name.log 2>&1 &
done
wait
