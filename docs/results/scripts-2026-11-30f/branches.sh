#!/usr/bin/env bash
# Issue 47, next step of "A soup of the continuations": more branches of `grow-ctl` at its
# generation 32, the default recipe (as m3-ctl) with other training seeds, two at a time, each
# to generation 48; then average them with the four parts (soup.sh's `copper average`).
# Usage: SEEDS="9986 9987" branches.sh   (resumable: run it again to go on)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash docs/results/scripts-2026-11-30f/anchor-g168.sh
C=${C:-target/release/copper}
for s in ${SEEDS:?name the training seeds}; do
  d=data/exp/br-$s
  if [ ! -d "$d" ]; then
    [ -f data/exp/grow-ctl/models/gen-0032/model.json ] || { echo "needs data/exp/grow-ctl at generation 32 (grow-ctl.sh)" >&2; exit 1; }
    cp -a data/exp/grow-ctl "$d"
    rm -f "$d/.train.lock"
    sed -i -e "s#^run_dir = .*#run_dir = \"$d\"#" -e "s/^seed = .*/seed = $s/" -e 's/^generations = .*/generations = 48/' "$d/config.toml"
  fi
  sed -e "s#^run_dir = \"data/exp/m3-ctl\"#run_dir = \"$d\"#" -e "s/^seed = 9914\b/seed = $s/" docs/results/m3-ctl.toml > "$d.toml"
  [ -d "$d/models/gen-0048" ] || nice -n 10 "$C" train --config "$d.toml" --from-model data/exp/anchor-g168 --generations 48 >> "$d.log" 2>&1 &
done
wait
