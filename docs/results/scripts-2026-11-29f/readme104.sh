#!/bin/bash
# Issue 47: the README's main command from scratch, continued in place past its 72
# generations to 104 (the same run directory: its optimiser, window and teacher positions
# kept), to tell whether the README run's plateau at about 50% against the yardstick ends
# by itself, as its restarted continuations (`long-re`, `long-nore`) climbed to about 70%
# in 32 generations. Then generation 104 rated as the others, on seeds 9101-9104.
# Run from the repository root, alone on the machine; resumable (re-run the same line).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
nice -n 10 $C train --config configs/default.toml --run-dir data/exp/readme104 --generations 104 --quiet >> data/exp/readme104.log 2>&1
bash docs/results/scripts-2026-11-29d/rate-long.sh data/exp/readme104/models/gen-0104 readme104-g104 9101 9102 9103 9104
