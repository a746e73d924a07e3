#!/usr/bin/env bash
# Perft speed against two peers in the same run: cshogi (PyPI; Apery's C++ legal-move
# generator) and Fairy-Stockfish (Debian). Standard shogi start position, depth 5, and the
# Pocket Shogi Copper start on our side.
#
# Usage: bench/perft_peers.sh [depth] [runs]   (defaults: 5, 7)
#
# Ours and cshogi run pinned to one core (taskset -c $PERFT_CORE, default 1), alternating
# (ours, cshogi, ours, cshogi, ...; `runs` of each), so both see the same load; as root
# they run at nice -10, so that background jobs at nice >= 0 yield. Each run's seconds
# are printed, then the medians and the ratio of the medians. Fairy-Stockfish (slower by
# far, timed with its process start) and the Pocket Shogi Copper row are medians of
# `runs` runs on the same core.
#
# PERFT_OURS replaces our command (default `target/release/copper perft -v`, built here);
# any command taking `VARIANT DEPTH` and printing `time S s` on stderr will do, such as
# `target/release/examples/perft` (`cargo build --release -p rules --example perft`),
# which skips building the cli for quick experiments on the move generator.
set -euo pipefail
cd "$(dirname "$0")/.."
depth=${1:-5}
runs=${2:-7}
core=${PERFT_CORE:-1}
bash scripts/install-test-deps.sh >/dev/null
py=$(bash scripts/install-cshogi.sh) # cshogi 1.1.0 in .venv-test/
if [ -n "${PERFT_OURS:-}" ]; then
  read -r -a ours_cmd <<<"$PERFT_OURS"
else
  cargo build --release -q -p cli
  ours_cmd=(target/release/copper perft -v)
fi
pin=(taskset -c "$core")
if [ "$(id -u)" -eq 0 ]; then pin=(nice -n -10 "${pin[@]}"); fi

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ours() { # variant -> seconds
  "${pin[@]}" "${ours_cmd[@]}" "$1" "$depth" 2>&1 >/dev/null | sed -n 's/^time \([0-9.]*\) s.*/\1/p'
}
cshogi() { "${pin[@]}" "$py" bench/cshogi_perft.py "$depth" | cut -d' ' -f2; }
fairy() {
  local s e
  s=$(date +%s.%N)
  printf 'usi\nsetoption name UCI_Variant value shogi\nposition startpos\ngo perft %s\nquit\n' "$depth" \
    | "${pin[@]}" /usr/games/fairy-stockfish >/dev/null
  e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}

shogi_nodes=$("${ours_cmd[@]}" shogi "$depth" 2>/dev/null | sed -n 's/^nodes //p')
pc_nodes=$("${ours_cmd[@]}" pocket-copper "$depth" 2>/dev/null | sed -n 's/^nodes //p')
cs_nodes=$("$py" bench/cshogi_perft.py "$depth" | cut -d' ' -f1)
[ "$cs_nodes" = "$shogi_nodes" ] || { echo "cshogi counts $cs_nodes nodes, we count $shogi_nodes" >&2; exit 1; }

echo "perft $depth, standard shogi start, pinned to core $core, alternating, $runs runs each"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | ours (s) | cshogi (s) |"
echo "|---|---|---|"
t_ours_all=()
t_cs_all=()
for i in $(seq "$runs"); do
  a=$(ours shogi)
  b=$(cshogi)
  t_ours_all+=("$a")
  t_cs_all+=("$b")
  printf '| %d | %.3f | %.3f |\n' "$i" "$a" "$b"
done
t_ours=$(printf '%s\n' "${t_ours_all[@]}" | median)
t_cs=$(printf '%s\n' "${t_cs_all[@]}" | median)
printf '| median | %.3f | %.3f |\n' "$t_ours" "$t_cs"
echo
t_pc=$(for _ in $(seq "$runs"); do ours pocket-copper; done | median)
t_fs=$(for _ in $(seq "$runs"); do fairy; done | median)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

rate() { echo "$1 / $2 / 1000000" | bc -l | xargs printf '%.1f'; }
echo "| engine | position | nodes | seconds (median) | M nodes/s |"
echo "|---|---|---|---|---|"
printf '| ours | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_ours" "$(rate "$shogi_nodes" "$t_ours")"
printf '| cshogi | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_cs" "$(rate "$shogi_nodes" "$t_cs")"
printf '| Fairy-Stockfish | shogi start | %s | %.3f | %s |\n' "$shogi_nodes" "$t_fs" "$(rate "$shogi_nodes" "$t_fs")"
printf '| ours | Pocket Shogi Copper start | %s | %.3f | %s |\n' "$pc_nodes" "$t_pc" "$(rate "$pc_nodes" "$t_pc")"
echo
r_cs=$(echo "$t_cs / $t_ours" | bc -l)
r_fs=$(echo "$t_fs / $t_ours" | bc -l)
r_pc=$(echo "($shogi_nodes / $t_ours) / ($pc_nodes / $t_pc)" | bc -l)
printf 'ours / cshogi (standard shogi, ratio of the medians): %.2fx (goal >= 1.5x)\n' "$r_cs"
printf 'ours / Fairy-Stockfish (standard shogi, ratio of the medians): %.2fx\n' "$r_fs"
printf 'Pocket Shogi Copper slowdown vs our standard shogi (nodes/s): %.2fx (goal <= 1.5x)\n' "$r_pc"
