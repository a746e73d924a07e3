#!/usr/bin/env bash
# Arm soup-ctl (issue 47): self-play from the shipped soup, the default recipe from a fresh
# optimiser and window for 32 generations (as grow-ctl from gen 168), niced; resumable.
# Then its generation 32 against the yardstick on the soups' sets (9990-9997): does self-play
# from a soup hold or build on the soup's gain? (Run the rating alone on an idle machine.)
set -euo pipefail
cd "$(dirname "$0")/../../.."
C=${C:-target/release/copper}
[ -d data/exp/soup-ctl/models/gen-0032 ] || nice -n 10 "$C" train --config docs/results/soup-ctl.toml \
  --from-model models/pocket-copper --generations 32 >> data/exp/soup-ctl.log 2>&1
[ "${TRAIN_ONLY:-}" ] && exit 0
docs/results/scripts-2026-11-30e/rate-vs-ab.sh data/exp/soup-ctl/models/gen-0032 soup-ctl-g32 9990 9991 9992 9993 9994 9995 9996 9997
