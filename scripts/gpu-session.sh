#!/usr/bin/env bash
# The GPU measurements of README's performance section, in one go on a GPU machine that
# has CUDA and PyTorch but no Rust and no network (the project's device machines).
#
#   scripts/gpu-session.sh prepare   # here: builds copper and netbench with the vulkan and
#                                    # gpu (wgpu) features into .gpu/, which travels along
#                                    # (CUDA=1 adds cuda, whose build downloads LLVM from
#                                    # GitHub; TCH=1 builds a second pair with LibTorch)
#   then carry .gpu (and .gl, the Vulkan loader's packages) to the GPU machine and there:
#   scripts/gpu-session.sh run       # there: every step time-boxed, results into $OUT
#
# `run` steps, each under its own timeout so that one that breaks leaves the others' results:
#   1. probe: nvidia-smi, the libraries burn loads at run time (libvulkan and the NVIDIA
#      Vulkan driver; libcuda and libnvrtc for cuda; the machine's own PyTorch's libtorch for
#      libtorch), a few tensor operations on each of DEVICES (libtorch,cuda,vulkan,wgpu); the
#      steps below run on the first that works;
#   2. model/bench/compare_torch.sh: burn against PyTorch on the same GPU, inference and
#      training of the 4x48 and 10x128 networks at batches 256 and 1024, f32 and bf16;
#   3. scripts/bench-selfplay-device.sh: self-play positions per second with the network on
#      the GPU and 16 search threads meeting in its batching queue, with nvidia-smi's
#      utilisation;
#   4. a short real run of the default Pocket Shogi Copper preset from the shipped model,
#      trainer and self-play on the GPU; its last model comes back in results.tar.gz.
# Knobs (defaults as run on an H200, 2026-11-27): OUT (data/gpu-session), DEVICES, SKIP (a
# comma list of steps: compare, selfplay, train), COMPARE_S (195), BENCH_SECONDS (1),
# SELFPLAY_S (110), GAMES (640), GAMES_IN_FLIGHT (40), TRAIN_S (165), TRAIN_GENERATIONS (2).
# All steps take about nine minutes; one device call may take ten, so a 15-minute lease runs
# two: `SKIP=selfplay,train` and then `SKIP=compare` (the probe is repeated, ~10 s).
#
# LibTorch (TCH=1): burn-tch links the libtorch of PyTorch 2.11.0+cu130, the GPU machine's
# own, so that it loads there; prepare downloads that wheel (530 MB, once, into
# ~/.cache/copper-tools) for the headers and libraries to build against, unless LIBTORCH
# names an unpacked one. tch 0.22 expects 2.9, hence LIBTORCH_BYPASS_VERSION_CHECK.
set -uo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
bin=$here/.gpu

# A binary, stripped and xz-compressed (python3's lzma unpacks it there): two sets fit
# the 64 MB that travels, where gzip's did not.
pack() {
  strip -o "$bin/$2" "$1"
  xz -9 -T2 -f "$bin/$2"
}

prepare() {
  set -e
  local features=cli/gpu,cli/vulkan,model/gpu,model/vulkan
  [ "${CUDA:-0}" = 1 ] && features=$features,cli/cuda,model/cuda
  # The device image's CUDA is 13.0 (driver 580): bind cudarc to that API rather than
  # the newest it knows, which it picks when no nvcc is found here.
  CUDARC_CUDA_VERSION=${CUDARC_CUDA_VERSION:-13000} cargo build --release -p cli -p model \
    --bin copper --bin netbench --features "$features"
  mkdir -p "$bin"
  rm -f "$bin"/*
  for b in copper netbench; do pack "target/release/$b" "$b"; done
  if [ "${TCH:-0}" = 1 ]; then
    local libtorch=${LIBTORCH:-}
    if [ -z "$libtorch" ]; then
      local cache=$HOME/.cache/copper-tools/torch-2.11.0
      if [ ! -d "$cache/torch/lib" ]; then
        mkdir -p "$cache"
        python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 \
          --platform manylinux_2_28_x86_64 torch==2.11.0 -d "$cache"
        (cd "$cache" && unzip -q -o torch-2.11.0-*.whl 'torch/lib/*' 'torch/include/*' 'torch/share/*' && rm torch-2.11.0-*.whl)
      fi
      libtorch=$cache/torch
    fi
    # Its own target folder: the link flag (libtorch_cuda's CUDA libraries are on the
    # GPU machine only) would otherwise rebuild everything in target/.
    LIBTORCH=$libtorch LIBTORCH_BYPASS_VERSION_CHECK=1 CARGO_TARGET_DIR=target-tch \
      RUSTFLAGS="-C link-arg=-Wl,--allow-shlib-undefined" \
      cargo build --release -p cli -p model --bin copper --bin netbench --features cli/tch,model/tch
    for b in copper netbench; do pack "target-tch/release/$b" "$b-tch"; done
  fi
  ls -la "$bin"
}

run() {
  OUT=${OUT:-data/gpu-session}
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  local res=$OUT/results
  mkdir -p "$res"
  exec > >(tee "$OUT/session.log") 2>&1
  skip=",${SKIP:-},"
  for f in "$bin"/*.xz; do
    local b
    b=$(basename "$f" .xz)
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "/tmp/$b"
    chmod +x "/tmp/$b"
  done
  # The binaries for a device: LibTorch's pair for libtorch, the other for the rest.
  binaries() {
    case $1 in
      libtorch*) copper=/tmp/copper-tch netbench=/tmp/netbench-tch ;;
      *) copper=/tmp/copper netbench=/tmp/netbench ;;
    esac
  }
  echo "== probe $(date -u +%T)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  # cudarc loads libnvrtc by name at run time: put the toolkit's and the pip wheels' folders
  # on the library path.
  local libs
  libs=$(find /usr/local/cuda*/ /usr/lib/x86_64-linux-gnu /opt -name 'libnvrtc.so*' 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')
  # The machine's PyTorch's libtorch (its own RUNPATH finds the CUDA libraries beside it).
  local torchlib
  torchlib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
  export LD_LIBRARY_PATH=${libs}${torchlib:+$torchlib:}${LD_LIBRARY_PATH:-}
  python3 -c 'import torch; print("PyTorch", torch.__version__)' || true
  echo "libnvrtc in: ${libs:-nowhere found}"
  ldconfig -p | grep -E 'libcuda\.so|libnvrtc|libvulkan' | head -6
  # The NVIDIA Vulkan driver's manifest, where the device image keeps it.
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d 2>/dev/null
  DEV=""
  local working=()
  local devices=${DEVICES:-libtorch,cuda,vulkan,wgpu}
  for d in ${devices//,/ }; do
    binaries "$d"
    [ -x "$netbench" ] || { echo "== $d: no binary for it in .gpu"; continue; }
    if timeout 120 "$netbench" --device "$d" --sizes 1x8 --batches 4 --engines burn,train --train-batch 4 --seconds 0.2; then
      working+=("$d")
      [ -z "$DEV" ] && DEV=$d
    else
      echo "== $d failed"
    fi
  done
  echo "== working: ${working[*]:-none}; measuring on ${DEV:-none} $(date -u +%T)"
  [ -z "$DEV" ] && return 1
  binaries "$DEV"

  if [[ $skip != *,compare,* ]]; then
    echo "== compare $(date -u +%T)"
    DEVICE=$DEV NETBENCH=$netbench SIZES=4x48,10x128 BATCHES=256,1024 TRAIN_BATCH=256,1024 \
      DTYPES=f32,bf16 BENCH_SECONDS=${BENCH_SECONDS:-1} KEEP_RAW=$res/compare.jsonl \
      timeout "${COMPARE_S:-195}" model/bench/compare_torch.sh
    python3 model/bench/report.py "$res/compare.jsonl" | tee "$res/compare.md"
    # The other burn GPU backends that came up, briefly, f32 only.
    for d in "${working[@]}"; do
      [ "$d" = "$DEV" ] && continue
      echo "== $d, briefly"
      binaries "$d"
      timeout 45 "$netbench" --device "$d" --sizes 4x48,10x128 --batches 256,1024 --engines burn,train \
        --train-batch 256 --seconds 1 --threads 16 | tee -a "$res/other-devices.jsonl"
    done
    binaries "$DEV"
  fi

  if [[ $skip != *,selfplay,* ]]; then
    echo "== selfplay $(date -u +%T)"
    DEVICE=$DEV COPPER=$copper CPU_HALF=0 THREADS=16 GAMES=${GAMES:-640} GAMES_IN_FLIGHT=${GAMES_IN_FLIGHT:-40} \
      timeout "${SELFPLAY_S:-110}" scripts/bench-selfplay-device.sh configs/default.toml models/pocket-copper \
      2>&1 | tee "$res/selfplay.log"
  fi

  if [[ $skip != *,train,* ]]; then
    echo "== train $(date -u +%T)"
    local run=/tmp/gpu-run
    rm -rf "$run"
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 > "$res/train-smi.csv" 2>/dev/null &
    local smi=$!
    timeout "${TRAIN_S:-165}" "$copper" train --config configs/default.toml --from-model models/pocket-copper \
      --device "$DEV" --threads 16 --generations "${TRAIN_GENERATIONS:-2}" --run-dir "$run" --quiet \
      2>&1 | tee "$res/train.log"
    kill "$smi" 2>/dev/null
    cp "$run/summary.tsv" "$run/config.toml" "$res/" 2>/dev/null
    local last
    last=$(ls -d "$run"/models/gen-[0-9][0-9][0-9][0-9] 2>/dev/null | tail -1)
    [ -n "$last" ] && cp -r "$last" "$res/last-model" && echo "last model: $last"
  fi
  echo "== done $(date -u +%T)"
  tar -C "$OUT" -czf "$OUT/results.tar.gz" results
  rm -rf "$res"
}

case ${1:-} in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac
