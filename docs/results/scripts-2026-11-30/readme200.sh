#!/bin/bash
# Issue 47: the README's run (`readme104`, build a404f27) continued in place from
# generation 104 to 200, to tell whether its climb goes on past the other runs' ~70%
# against the yardstick, and to give one run a ladder over both halves of 200 generations.
# Run from the repository root; resumable (re-run the same line). Generations are rated
# separately (rate-long.sh), with this training paused (kill -STOP / -CONT).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-data/exp/copper-a404f27}
nice -n 10 $C train --config configs/default.toml --run-dir data/exp/readme104 --generations 200 --quiet >> data/exp/readme200.log 2>&1
