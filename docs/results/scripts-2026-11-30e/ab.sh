#!/usr/bin/env bash
# The control's generation 48 and its start (README run gen 168) against the yardstick alpha-beta
# on the same eight fresh sets (seeds 9946-9953), one after the other on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
S="9946 9947 9948 9949 9950 9951 9952 9953"
docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/m3-ctl/models/gen-0048 m3-ctl-g48 $S
docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/anchor-g168 g168 $S
