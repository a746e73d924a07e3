#!/usr/bin/env bash
# Issue 47, "More branches, and self-play from the soup": at the loop's evaluation budget
# (as `soup-ctl`'s loop played the README run's generation 168 every generation), the soup
# itself and soup-ctl's generation 32 against generation 168 on the same 256 openings.
set -euo pipefail
cd "$(dirname "$0")"
./vs-g168-100sims.sh models/pocket-copper soup4
./vs-g168-100sims.sh data/exp/soup-ctl/models/gen-0032 soup-ctl-g32
