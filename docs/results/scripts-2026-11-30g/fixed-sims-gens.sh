#!/usr/bin/env bash
# Issue 47: how fast self-play from the soup leaves it — soup-ctl's generations 1, 4 and 16
# against the README run's generation 168 at 100 simulations on fixed-sims.sh's openings.
set -euo pipefail
cd "$(dirname "$0")"
for g in 0001 0004 0016; do ./vs-g168-100sims.sh data/exp/soup-ctl/models/gen-$g soup-ctl-g$g; done
