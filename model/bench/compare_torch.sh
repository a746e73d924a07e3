#!/usr/bin/env bash
# Compare the burn network (burn-flex eval mode, folded CPU engine, burn-flex training)
# with the identical PyTorch network on the CPU, same thread count, same run; with
# DEVICE=vulkan, wgpu, cuda[:N] or libtorch[:N], burn on that GPU backend against PyTorch on
# CUDA on the same GPU (scripts/gpu-session.sh runs it on a GPU machine).
#
# Usage: model/bench/compare_torch.sh            (CPU)
#        DEVICE=cuda model/bench/compare_torch.sh (GPU: builds netbench --features cuda)
#        DEVICE=vulkan model/bench/compare_torch.sh (burn on Vulkan with SPIR-V kernels,
#          PyTorch on CUDA: the same GPU; DEVICE=wgpu: burn's WGSL kernels; the cuda
#          feature's build downloads an LLVM bundle from GitHub, wgpu's and vulkan's do not)
# Environment knobs: THREADS (2; 16 on a GPU), SIZES (4x48,6x64,10x128), BATCHES
#   (1,16,64,256; on a GPU 64,256,1024,4096), TRAIN_BATCH (a comma list: 256; on a GPU
#   256,1024), BENCH_SECONDS (3 per measurement), PLANES (100), POLICY_PLANES (140),
#   TORCH_FOLDED=1 adds a torch.jit.freeze (BN folded) column, ROUNDS (1): repeat the
#   whole alternation and report medians (single runs on a shared VM vary up to 2x).
#   DTYPES (f32; on a GPU e.g. f32,bf16: PyTorch's autocast against burn with bf16 as the
#   device's float type). NETBENCH: a netbench binary built elsewhere (the GPU machine has
#   no Rust: scripts/gpu-session.sh builds it here and carries it); unset, it is built.
#   KEEP_RAW: a file that receives the raw JSON lines as they are measured.
#   PyTorch: the venv below, else a python3 that already has torch (the GPU machine's
#   image), else pip installs it.
# Placeholder encoding sizes: 100 input planes, 140 policy planes, 9x9 board.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DEVICE=${DEVICE:-cpu}
gpu=0
[ "$DEVICE" != cpu ] && gpu=1
if [ $gpu = 1 ]; then
  THREADS=${THREADS:-16}
  BATCHES=${BATCHES:-64,256,1024,4096}
  TRAIN_BATCH=${TRAIN_BATCH:-256,1024}
fi
THREADS=${THREADS:-2}
SIZES=${SIZES:-4x48,6x64,10x128}
BATCHES=${BATCHES:-1,16,64,256}
TRAIN_BATCH=${TRAIN_BATCH:-256}
BENCH_SECONDS=${BENCH_SECONDS:-3}
PLANES=${PLANES:-100}
POLICY_PLANES=${POLICY_PLANES:-140}

venv=$here/.venv
if "$venv/bin/python" -c "import torch" 2>/dev/null; then
  python=$venv/bin/python
elif python3 -c "import torch" 2>/dev/null; then
  python=python3
else
  echo "== creating $venv and installing torch from PyPI (large download)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet torch numpy
  python=$venv/bin/python
fi
if [ $gpu = 1 ] && ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "DEVICE=$DEVICE but PyTorch ($python) sees no CUDA device" >&2
  exit 1
fi

features=()
case $DEVICE in
  cuda*) features=(--features cuda) ;;
  wgpu) features=(--features gpu) ;;
  vulkan) features=(--features vulkan) ;;
  libtorch*) features=(--features tch) ;;  # and LIBTORCH=...: see scripts/gpu-session.sh
esac
if [ -z "${NETBENCH:-}" ]; then
  echo "== building netbench ${features[*]}" >&2
  (cd "$root" && cargo build -j 1 --release -p model --bin netbench "${features[@]}") >&2
  NETBENCH=$root/target/release/netbench
fi
DTYPES=${DTYPES:-f32}
# On a GPU burn's `burn` and `burn_ref` engines are the same conv2d: time one.
burn_engines=()
[ $gpu = 1 ] && burn_engines=(--engines burn,train)

export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS RAYON_NUM_THREADS=$THREADS
load1=$(cut -d' ' -f1 /proc/loadavg)
if awk "BEGIN{exit !($load1 > 0.5)}"; then
  echo "WARNING: 1-minute load average is $load1 before starting: other work is using the CPU," >&2
  echo "         figures will be low and noisy (torch's OpenMP threads suffer most)." >&2
fi
out=$(mktemp -d)
# KEEP_RAW: the results file, written as the measurements come (a timeout keeps them).
[ -n "${KEEP_RAW:-}" ] && ln -s "$(realpath "$KEEP_RAW")" "$out/all.jsonl"
case $DEVICE in
  wgpu|vulkan|libtorch) TORCH_DEVICE=${TORCH_DEVICE:-cuda} ;;
  libtorch:*) TORCH_DEVICE=${TORCH_DEVICE:-cuda:${DEVICE#libtorch:}} ;;
  *) TORCH_DEVICE=${TORCH_DEVICE:-$DEVICE} ;;
esac
common=(--threads "$THREADS" --batches "$BATCHES"
        --seconds "$BENCH_SECONDS" --planes "$PLANES" --policy-planes "$POLICY_PLANES")
torch_extra=()
[ "${TORCH_FOLDED:-0}" = 1 ] && torch_extra=(--folded)

# Alternate engines per size so that a change of machine load hits both alike.
ROUNDS=${ROUNDS:-1}
for round in $(seq 1 "$ROUNDS"); do
for dtype in ${DTYPES//,/ }; do
for size in ${SIZES//,/ }; do
  echo "== $size $dtype: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"size\": \"$size\", \"when\": \"before torch\"}" >> "$out/all.jsonl"
  first=1
  for tb in ${TRAIN_BATCH//,/ }; do
    # Inference once per size (with the first training batch), training per batch size.
    if [ $first = 1 ]; then t_only=(); b_only=("${burn_engines[@]}"); else t_only=(--no-infer); b_only=(--engines train); fi
    "$python" -W ignore "$here/torch_net.py" --sizes "$size" --train-batch "$tb" "${common[@]}" --device "$TORCH_DEVICE" --dtype "$dtype" "${torch_extra[@]}" "${t_only[@]}" >> "$out/all.jsonl" \
      || echo "== torch $size $dtype batch $tb failed (exit $?)" >&2
    echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"size\": \"$size\", \"when\": \"before burn\"}" >> "$out/all.jsonl"
    if ! "$NETBENCH" --sizes "$size" --train-batch "$tb" "${common[@]}" --device "$DEVICE" --dtype "$dtype" "${b_only[@]}" >> "$out/all.jsonl"; then
      echo "== burn $size $dtype batch $tb failed" >&2
      # A backend without bf16 (Vulkan, say) may still have f16: the row says which ran.
      if [ "$dtype" = bf16 ]; then
        "$NETBENCH" --sizes "$size" --train-batch "$tb" "${common[@]}" --device "$DEVICE" --dtype f16 "${b_only[@]}" \
          | sed 's/"dtype": "f16"/"dtype": "bf16", "burn_dtype": "f16"/' >> "$out/all.jsonl" \
          || echo "== burn $size f16 batch $tb failed too" >&2
      fi
    fi
    first=0
  done
done
done
done
echo "{\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"when\": \"end\"}" >> "$out/all.jsonl"

python3 "$here/report.py" "$out/all.jsonl"
echo "(raw results: $out/all.jsonl)"
true
