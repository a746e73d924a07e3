#!/usr/bin/env bash
# Issue 47: the README's main command from scratch with selfplay.mate_in_three = true
# (docs/results/scratch-m3.toml), niced, resumable: run it again to go on. GENS=168 trains on
# in place past the config's 104, as the README run was.
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
exec nice -n 10 "$C" train --config docs/results/scratch-m3.toml ${GENS:+--generations "$GENS"} >> data/exp/scratch-m3.log 2>&1
