#!/bin/bash
# Issue 47: the README's command with a second training seed (`seed = 2`, everything else
# configs/default.toml as of 2026-11-30: 104 generations), to repeat the arm of
# `readme104` (docs/TRAINING.md), then on in place to generation 168 as the shipped model's
# run went (GENERATIONS=104 stops at the default's end). Run from the repository root;
# resumable (re-run the same line; a stopped run continues from its last finished generation).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
mkdir -p data/exp
sed 's/^seed = 1 /seed = 2 /' configs/default.toml > data/exp/readme-seed2.toml
grep -q '^seed = 2 ' data/exp/readme-seed2.toml
nice -n 10 $C train --config data/exp/readme-seed2.toml --run-dir data/exp/readme-seed2 --generations ${GENERATIONS:-168} --quiet >> data/exp/readme-seed2.log 2>&1
