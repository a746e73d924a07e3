#!/usr/bin/env bash
# Both arms continued in place (their optimiser and window) to generation 24, side by side, niced.
set -euo pipefail
cd "$(dirname "$0")/../../.."
nice -n 5 data/exp/copper-s2 train --config docs/results/grow-ctl.toml --from-model data/exp/anchor-g168 --generations 24 > data/exp/grow-ctl-24.log 2>&1 &
nice -n 5 data/exp/copper-grow train --config docs/results/grow-6x64.toml --from-model data/exp/grown-6x64-g168 --generations 24 > data/exp/grow-6x64-24.log 2>&1 &
wait
S="9916 9917 9918 9919 9920 9921 9922 9923"
docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/grow-6x64/models/gen-0024 grow-6x64-g24 $S
docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/grow-ctl/models/gen-0024 grow-ctl-g24 $S
