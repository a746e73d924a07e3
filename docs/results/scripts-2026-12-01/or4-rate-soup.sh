#!/usr/bin/env bash
# The shipped soup against the yardstick alpha-beta on the random-opening arms' sets (seeds
# 9999-10006), after or4-rate.sh: where the arms and controls of generation 16 stand against
# their start on the same openings. Run alone on an idle machine; resumable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
docs/results/scripts-2026-11-30e/rate-vs-ab.sh models/pocket-copper soup4-shipped 9999 10000 10001 10002 10003 10004 10005 10006
