#!/usr/bin/env bash
# The control continued in place to generation 32, alone, then rated as before (run with the
# binary data/exp/copper-s2, 7c926c8; C names it).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
nice -n 5 "$C" train --config docs/results/grow-ctl.toml --from-model data/exp/anchor-g168 --generations 32 > data/exp/grow-ctl-32.log 2>&1
docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/grow-ctl/models/gen-0032 grow-ctl-g32 9916 9917 9918 9919 9920 9921 9922 9923
