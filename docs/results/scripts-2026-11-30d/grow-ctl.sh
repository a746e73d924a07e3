#!/usr/bin/env bash
# Arm grow-ctl: the control (4x48 from the shipped model), niced. Binary: data/exp/copper-s2 (7c926c8).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-s2}
nice -n 5 "$C" train --config docs/results/grow-ctl.toml --from-model data/exp/anchor-g168
