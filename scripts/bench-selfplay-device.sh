#!/usr/bin/env bash
# Self-play throughput on an accelerator against the two-core CPU figure, same network,
# same settings, one run: `copper bench-selfplay` with selfplay.device = $DEVICE and
# $THREADS search threads (their leaves meet in the batching queue), then with the CPU
# and 2 threads. On an NVIDIA GPU it samples nvidia-smi's utilisation during the run.
#
#   DEVICE=cuda scripts/bench-selfplay-device.sh [CONFIG] [MODEL_DIR]
#
# Knobs: DEVICE (cuda; `cpu` runs only the CPU half, for a check without a GPU), THREADS
# (16), GAMES (256), GAMES_IN_FLIGHT (64 per thread), CPU_HALF (1; 0 skips the CPU run),
# COPPER (a `copper` built elsewhere: the GPU machine has no Rust, scripts/gpu-session.sh
# carries one). The device build is `cargo build --release -p cli --features cuda`
# (wgpu: --features gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/default.toml}
model=${2:-}
DEVICE=${DEVICE:-cuda}
THREADS=${THREADS:-16}
GAMES=${GAMES:-256}
GAMES_IN_FLIGHT=${GAMES_IN_FLIGHT:-64}
features=()
case $DEVICE in
  cuda*) features=(--features cuda) ;;
  wgpu) features=(--features gpu) ;;
  vulkan) features=(--features vulkan) ;;
  libtorch*) features=(--features tch) ;;  # and LIBTORCH=...: see scripts/gpu-session.sh
esac
if [ -n "${COPPER:-}" ]; then
  copper=$COPPER
else
  cargo build --release -p cli --quiet "${features[@]}"
  copper=target/release/copper
fi
model_args=()
[ -n "$model" ] && model_args=(--model "$model")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

with() { # config key edits -> a config file
  python3 - "$config" "$tmp/$1.toml" "${@:2}" <<'PY'
import re, sys
src, dst, *edits = sys.argv[1:]
text = open(src).read()
for e in edits:
    key, value = e.split('=', 1)
    section, name = key.split('.') if '.' in key else ('', key)
    out, current, done = [], '', False
    for line in text.split('\n'):
        m = re.match(r'\s*\[([^\]]+)\]', line)
        if m:
            current = m.group(1)
        if not done and current == section and re.match(rf'\s*{re.escape(name)}\s*=', line):
            line, done = f'{name} = {value}', True
        out.append(line)
    if not done:
        sys.exit(f'{src}: no key {key}')
    text = '\n'.join(out)
open(dst, 'w').write(text)
PY
  echo "$tmp/$1.toml"
}

if [ "$DEVICE" != cpu ]; then
  cfg=$(with device threads="$THREADS" selfplay.device="\"$DEVICE\"" selfplay.games_in_flight="$GAMES_IN_FLIGHT")
  echo "== $DEVICE, $THREADS threads, $GAMES_IN_FLIGHT games in flight each"
  smi=""
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 250 > "$tmp/smi.csv" &
    smi=$!
  fi
  "$copper" bench-selfplay --config "$cfg" --games "$GAMES" "${model_args[@]}"
  if [ -n "$smi" ]; then
    kill "$smi" 2>/dev/null || true
    awk -F, '{u += $1; m = ($2 > m ? $2 : m); n++} END {if (n) printf "GPU utilisation (nvidia-smi, %d samples) mean %.0f%%, memory up to %d MiB\n", n, u / n, m}' "$tmp/smi.csv"
  fi
fi
[ "${CPU_HALF:-1}" = 0 ] && exit 0
cfg=$(with cpu threads=2 selfplay.device='"cpu"')
echo "== cpu, 2 threads"
"$copper" bench-selfplay --config "$cfg" --games "$GAMES" "${model_args[@]}"
