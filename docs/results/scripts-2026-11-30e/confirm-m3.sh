#!/usr/bin/env bash
# Issue 47: `m3-arm`'s generation 48 (shipped since as models/pocket-copper) against its start, the shipped model, on
# eight fresh sets of 32 (seeds 9954-9961), as rate-vs-g168.sh plays (100 ms, int8 both).
set -euo pipefail
cd "$(dirname "$0")/../../.."
docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/m3-arm/models/gen-0048 m3-arm-g48-fresh 9954 9955 9956 9957 9958 9959 9960 9961
