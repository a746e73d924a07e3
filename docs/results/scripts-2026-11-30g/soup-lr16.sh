#!/usr/bin/env bash
# soup-lr continued in place to generation 16 (resumable), then generation 16 against the
# README run's generation 168 at 100 simulations on fixed-sims.sh's openings.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30g/soup-lr.sh
C=${C:-target/release/copper}
[ -d data/exp/soup-lr/models/gen-0016 ] || "$C" train --config docs/results/soup-lr.toml \
  --from-model models/pocket-copper --generations 16 >> data/exp/soup-lr.log 2>&1
docs/results/scripts-2026-11-30g/vs-g168-100sims.sh data/exp/soup-lr/models/gen-0016 soup-lr-g0016
