#!/usr/bin/env bash
# Arm grow-6x64: the shipped model grown to 6x64, then the default recipe, niced. Binary: data/exp/copper-grow (ed99e12).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-grow}
[ -d data/exp/grown-6x64-g168 ] || "$C" grow --model data/exp/anchor-g168 --blocks 6 --channels 64 --out data/exp/grown-6x64-g168 --seed 9915
nice -n 5 "$C" train --config docs/results/grow-6x64.toml --from-model data/exp/grown-6x64-g168
