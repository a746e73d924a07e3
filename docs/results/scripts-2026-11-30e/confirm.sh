#!/usr/bin/env bash
# Issue 47: the control's generation 48 (`grow-ctl` continued in place as `m3-ctl`) against its
# start on eight fresh sets of 32 (seeds 9938-9945), as rate-vs-g168.sh plays (100 ms, int8 both).
set -euo pipefail
cd "$(dirname "$0")/../../.."
docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/m3-ctl/models/gen-0048 m3-ctl-g48-fresh 9938 9939 9940 9941 9942 9943 9944 9945
