#!/usr/bin/env bash
# Ablations of the training loop: each variant is a base config with some keys changed,
# trained from scratch, then rated by `copper ladder` against the same fixed anchors (the
# uniform-prior search at the evaluation budget = 0 Elo, and the run's evaluation anchor),
# so every row of the table is on one Elo scale.
#
#   scripts/ablate.sh BASE_CONFIG GENERATIONS NAME[:key=value[,key=value...]] ...
#
# e.g. scripts/ablate.sh configs/quick.toml 20 base svs50:search_value_share=0.5 \
#        g256:games=256 svs50-g256:search_value_share=0.5,games=256
#
# Keys are the config's own (the last key of that name in the file is changed, e.g.
# `games`, `simulations` of [selfplay] come before those of [evaluation]: use the
# section-qualified form selfplay.simulations / evaluation.simulations to be exact).
# Runs go to data/ablations/<base>-<name>/ (resumable: re-running skips finished work);
# the table is printed and written to data/ablations/<base>-table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1 gens=$2
shift 2
stem=$(basename "$base" .toml)
out=data/ablations
mkdir -p "$out/configs"
cargo build --release -p cli --quiet
copper=target/release/copper
ladder_rounds=${LADDER_ROUNDS:-4}
ladder_every=${LADDER_EVERY:-2}

set_key() { # file, key (optionally section.key), value
  python3 - "$@" <<'EOF'
import re, sys
path, key, value = sys.argv[1:4]
section, _, name = key.rpartition('.')
lines = open(path).read().split('\n')
current, hit = '', None
for i, line in enumerate(lines):
    m = re.match(r'\s*\[([^\]]+)\]', line)
    if m:
        current = m.group(1)
    elif re.match(rf'\s*{re.escape(name)}\s*=', line) and (not section or current == section):
        hit = i
        if section:
            break
if hit is None:
    sys.exit(f'{path}: no key {key}')
comment = lines[hit].split('#', 1)[1] if '#' in lines[hit] else ''
lines[hit] = f'{name} = {value}' + (f'  #{comment}' if comment else '')
open(path, 'w').write('\n'.join(lines))
EOF
}

table="$out/$stem-table.md"
{
  echo "| variant | changes | generations | CPU-minutes | Elo of the last generation (95%) | best generation's Elo |"
  echo "|---|---|---|---|---|---|"
} > "$table"
for spec in "$@"; do
  name=${spec%%:*}
  changes=""
  [[ $spec == *:* ]] && changes=${spec#*:}
  run="$out/$stem-$name"
  cfg="$out/configs/$stem-$name.toml"
  cp "$base" "$cfg"
  set_key "$cfg" run_dir "\"$run\""
  set_key "$cfg" generations "$gens"
  IFS=',' read -ra kvs <<< "$changes"
  for kv in "${kvs[@]}"; do
    [[ -z $kv ]] && continue
    set_key "$cfg" "${kv%%=*}" "${kv#*=}"
  done
  echo "== $name ($changes): training $gens generations into $run"
  "$copper" train --config "$cfg" --quiet | tee "$run.log"
  "$copper" ladder --run "$run" --rounds "$ladder_rounds" --every "$ladder_every" --quiet | tail -n +1 > "$run.ladder.log"
  tsv="$run/ladder/ladder.tsv"
  awk -F'\t' -v name="$name" -v changes="${changes:-(base)}" '
    NR > 1 { g = $1; e = $2; lo = $3; hi = $4; cpu = $5; if (best == "" || e > best) { best = e; bg = g } }
    END { printf "| %s | %s | %d | %.1f | %+.0f [%+.0f, %+.0f] | %+.0f (gen %d) |\n", name, changes, g, cpu * 60, e, lo, hi, best, bg }
  ' "$tsv" >> "$table"
done
cat "$table"
