#!/usr/bin/env bash
# Arena throughput: a checkpoint against a baseline at the default evaluation budget
# (24 simulations a move), on all cores; prints games per hour and CPU use.
#   bench/arena_throughput.sh MODEL_DIR [GAME_PAIRS] [OPPONENT_SPEC]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:?usage: bench/arena_throughput.sh MODEL_DIR [GAME_PAIRS] [OPPONENT_SPEC]}"
pairs="${2:-32}"
opponent="${3:-alphabeta,depth=1}"
threads="$(nproc)"
out="$(mktemp -d)/arena"
cargo build --release -q -p cli
start=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$out.time" target/release/copper arena --quiet -v pocket-copper \
  -p "checkpoint:$model,sims=24,name=model" -p "$opponent" --rounds "$pairs" \
  --threads "$threads" --games-in-flight 16 --out "$out" > "$out.table"
end=$(date +%s.%N)
read -r user sys < "$out.time"
games=$(wc -l < "$out/results.jsonl")
plies=$(python3 -c "import json,sys; g=[json.loads(l) for l in open('$out/results.jsonl')]; print(sum(len(h['record']['moves']) for r in g for h in r['hands'])/len(g))")
python3 - "$start" "$end" "$user" "$sys" "$games" "$threads" "$plies" <<'PY'
import sys
start, end, user, sys_, games, threads, plies = map(float, sys.argv[1:])
wall = end - start
print(f"games            {games:.0f}")
print(f"wall time        {wall:.1f} s")
print(f"games per hour   {games / wall * 3600:.0f}")
print(f"average length   {plies:.0f} plies")
print(f"moves per second {games * plies / wall:.0f}")
print(f"CPU utilisation  {100 * (user + sys_) / (wall * threads):.0f}% of {threads:.0f} cores")
PY
head -3 "$out.table"
