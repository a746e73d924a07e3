#!/usr/bin/env bash
# Generation 16 of each random-opening arm and its control against the yardstick alpha-beta at
# 100 ms on eight fresh sets (seeds 9999-10006), after or4.sh. Usage: or4-rate.sh NAME... (run
# alone on an idle machine; resumable): `or4-rate.sh soup-or4 soup-ctl soup-or4-s2 soup-ctl-s2`,
# then `or4-rate.sh soup-or4-s3 soup-ctl-s3`; or4-rate-soup.sh rates their start on the same sets.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for name in "$@"; do
  docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/$name/models/gen-0016 $name-g16 9999 10000 10001 10002 10003 10004 10005 10006
done
