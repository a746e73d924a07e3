#!/usr/bin/env bash
# Arm soup-lr (issue 47): soup-ctl at a fifth of the learning rate (docs/results/soup-lr.toml),
# 16 generations (resumable), then its generations 1, 4 and 16 against the README run's
# generation 168 at 100 simulations on fixed-sims.sh's openings, where the soup scores 176/256
# and soup-ctl's generations 1, 4 and 16 150, 152 and 161.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
[ -d data/exp/soup-lr/models/gen-0016 ] || "$C" train --config docs/results/soup-lr.toml \
  --from-model models/pocket-copper >> data/exp/soup-lr.log 2>&1
for g in 0001 0004 0016; do docs/results/scripts-2026-11-30g/vs-g168-100sims.sh data/exp/soup-lr/models/gen-$g soup-lr-g$g; done
