#!/usr/bin/env bash
# Perft speed against two peers in the same run: Fairy-Stockfish (Debian) and cshogi
# (PyPI; Apery's C++ legal-move generator). Standard shogi start position, depth 5, and
# the Pocket Shogi Copper start on our side. Usage: bench/perft_peers.sh [depth] [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
depth=${1:-5}
repeats=${2:-3}
bash scripts/install-test-deps.sh >/dev/null
if [ ! -x bench/.venv/bin/python ]; then
  python3 -m venv bench/.venv
fi
bench/.venv/bin/python -c 'import cshogi' 2>/dev/null || bench/.venv/bin/pip install -q cshogi
cargo build --release -q -p cli
bin=target/release/copper

best() { sort -g | head -1; }
ours() { # variant -> seconds (best of $repeats)
  for _ in $(seq "$repeats"); do
    "$bin" perft -v "$1" "$depth" 2>&1 >/dev/null | sed -n 's/^time \([0-9.]*\) s.*/\1/p'
  done | best
}
fairy() {
  for _ in $(seq "$repeats"); do
    s=$(date +%s.%N)
    printf 'usi\nsetoption name UCI_Variant value shogi\nposition startpos\ngo perft %s\nquit\n' "$depth" \
      | /usr/games/fairy-stockfish >/dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | best
}
cshogi() {
  for _ in $(seq "$repeats"); do bench/.venv/bin/python bench/cshogi_perft.py "$depth" | cut -d' ' -f2; done | best
}

shogi_nodes=$("$bin" perft -v shogi "$depth" 2>/dev/null | sed -n 's/^nodes //p')
pc_nodes=$("$bin" perft -v pocket-copper "$depth" 2>/dev/null | sed -n 's/^nodes //p')
t_ours=$(ours shogi)
t_pc=$(ours pocket-copper)
t_fs=$(fairy)
t_cs=$(cshogi)
rate() { echo "$1 / $2 / 1000000" | bc -l | xargs printf '%.1f'; }
echo "perft $depth, best of $repeats runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| engine | position | nodes | seconds | M nodes/s |"
echo "|---|---|---|---|---|"
printf '| ours | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_ours" "$(rate "$shogi_nodes" "$t_ours")"
printf '| cshogi | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_cs" "$(rate "$shogi_nodes" "$t_cs")"
printf '| Fairy-Stockfish | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_fs" "$(rate "$shogi_nodes" "$t_fs")"
printf '| ours | Pocket Shogi Copper start | %s | %.3f | %s |\n' "$pc_nodes" "$t_pc" "$(rate "$pc_nodes" "$t_pc")"
echo
r_cs=$(echo "($shogi_nodes / $t_ours) / ($shogi_nodes / $t_cs)" | bc -l)
r_fs=$(echo "($shogi_nodes / $t_ours) / ($shogi_nodes / $t_fs)" | bc -l)
r_pc=$(echo "($shogi_nodes / $t_ours) / ($pc_nodes / $t_pc)" | bc -l)
printf 'ours / cshogi (standard shogi, nodes/s): %.2fx\n' "$r_cs"
printf 'ours / Fairy-Stockfish (standard shogi, nodes/s): %.2fx\n' "$r_fs"
printf 'Pocket Shogi Copper slowdown vs our standard shogi (nodes/s): %.2fx (goal <= 1.5x)\n' "$r_pc"
