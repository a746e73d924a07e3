#!/usr/bin/env bash
# Compare the burn network (burn-flex eval mode, folded CPU engine, burn-flex training)
# with the identical PyTorch network on the CPU, same thread count, same run.
#
# Usage: model/bench/compare_torch.sh
# Environment knobs: THREADS (2), SIZES (4x48,6x64,10x128), BATCHES (1,16,64,256),
#   TRAIN_BATCH (256), BENCH_SECONDS (3 per measurement), PLANES (100), POLICY_PLANES (140),
#   TORCH_FOLDED=1 adds a torch.jit.freeze (BN folded) column.
# Placeholder encoding sizes: 100 input planes, 140 policy planes, 9x9 board.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
THREADS=${THREADS:-2}
SIZES=${SIZES:-4x48,6x64,10x128}
BATCHES=${BATCHES:-1,16,64,256}
TRAIN_BATCH=${TRAIN_BATCH:-256}
BENCH_SECONDS=${BENCH_SECONDS:-3}
PLANES=${PLANES:-100}
POLICY_PLANES=${POLICY_PLANES:-140}

venv=$here/.venv
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "== creating $venv and installing torch from PyPI (large download)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet torch numpy
fi

echo "== building netbench" >&2
(cd "$root" && cargo build -j 1 --release -p model --bin netbench) >&2

export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS RAYON_NUM_THREADS=$THREADS
load1=$(cut -d' ' -f1 /proc/loadavg)
if awk "BEGIN{exit !($load1 > 0.5)}"; then
  echo "WARNING: 1-minute load average is $load1 before starting: other work is using the CPU," >&2
  echo "         figures will be low and noisy (torch's OpenMP threads suffer most)." >&2
fi
out=$(mktemp -d)
common=(--threads "$THREADS" --batches "$BATCHES" --train-batch "$TRAIN_BATCH"
        --seconds "$BENCH_SECONDS" --planes "$PLANES" --policy-planes "$POLICY_PLANES")
torch_extra=()
[ "${TORCH_FOLDED:-0}" = 1 ] && torch_extra=(--folded)

# Alternate engines per size so that a change of machine load hits both alike.
for size in ${SIZES//,/ }; do
  echo "== $size: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"size\": \"$size\", \"when\": \"before torch\"}" >> "$out/all.jsonl"
  "$venv/bin/python" -W ignore "$here/torch_net.py" --sizes "$size" "${common[@]}" "${torch_extra[@]}" >> "$out/all.jsonl"
  echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"size\": \"$size\", \"when\": \"before burn\"}" >> "$out/all.jsonl"
  "$root/target/release/netbench" --sizes "$size" "${common[@]}" >> "$out/all.jsonl"
done
echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"when\": \"end\"}" >> "$out/all.jsonl"

python3 "$here/report.py" "$out/all.jsonl"
echo "(raw results: $out/all.jsonl)"
