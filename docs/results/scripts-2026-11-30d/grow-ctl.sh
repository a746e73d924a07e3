#!/usr/bin/env bash
# Arm grow-ctl: the control (4x48 from the shipped model of then, README run gen 168), niced.
# Run with the binary data/exp/copper-s2 (7c926c8); C names another.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
nice -n 5 "$C" train --config docs/results/grow-ctl.toml --from-model data/exp/anchor-g168
