#!/usr/bin/env bash
# Issue 47: the soup of four continuations (soup.sh) against the shipped model head to head at
# 100 ms on eight fresh sets (9970-9977), as confirm-m3.sh played the shipped model against its
# start, both in int8 with the rated players' search; one after the other on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
T=movetime=100,mate=on,mate3=all,qmix=0.5,qscale=1000,precision=int8
OPP="checkpoint:models/pocket-copper,$T,name=shipped-m3" OUT=data/exp/h2h100ms \
  docs/results/scripts-2026-11-30d/rate-vs-g168.sh data/exp/soup4-g48 soup4-g48 9970 9971 9972 9973 9974 9975 9976 9977
# Then against the yardstick alpha-beta on eight more fresh sets (9978-9985).
docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/soup4-g48 soup4-g48-fresh 9978 9979 9980 9981 9982 9983 9984 9985
