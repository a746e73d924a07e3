#!/usr/bin/env bash
# Issue 47: a model soup (Wortsman et al. 2022, "Model soups: averaging weights of multiple
# fine-tuned models"): the uniform mean of the four 48-generation continuations of the README
# run's generation 168 (m3-arm, m3-ctl, m3-arm-s2, m3-ctl-s2, kept in models/; `copper average`),
# against the yardstick alpha-beta on the eight sets all four and their start played (seeds
# 9962-9969). The mean is the shipped models/pocket-copper (the same weights; burn's parameter
# ids, random, differ between two runs of `copper average`).
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
[ -f data/exp/soup4-g48/model.json ] || "$C" average --out data/exp/soup4-g48 \
  models/g168-m3-on48 models/g168-on48 models/g168-m3-on48-s2 models/g168-on48-s2
docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/soup4-g48 soup4-g48 9962 9963 9964 9965 9966 9967 9968 9969
