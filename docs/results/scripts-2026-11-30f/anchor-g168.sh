#!/usr/bin/env bash
# The start of the 2026-11-30 continuations, data/exp/anchor-g168: the README run's generation 168
# (models/pocket-copper of 7c926c8, committed since as models/readme-g168). Their run directories
# name it by this path, so a fresh machine gets a copy here. Run from the repository root.
set -euo pipefail
[ -f data/exp/anchor-g168/model.json ] || { mkdir -p data/exp; cp -r models/readme-g168 data/exp/anchor-g168; rm -f data/exp/anchor-g168/CARD.md; }
