#!/usr/bin/env bash
# Issue 47: the shipped model (`m3-arm` gen 48) and the model before it (README run gen 168)
# against the yardstick alpha-beta on the eight sets the second seed's arms played (seeds
# 9962-9969), one after the other on an idle machine, for a four-way paired comparison.
set -euo pipefail
cd "$(dirname "$0")/../../.."
S="9962 9963 9964 9965 9966 9967 9968 9969"
docs/results/scripts-2026-11-30e/rate-vs-ab.sh models/pocket-copper m3-arm-g48-s2sets $S
docs/results/scripts-2026-11-30e/rate-vs-ab.sh models/readme-g168 g168-s2sets $S
