#!/bin/bash
# The LibTorch build against a CPU-shaped copy of PyTorch 2.11.0's libtorch (docs/PERFORMANCE.md,
# "The LibTorch build run on a CPU"). Needs the wheel's torch/{lib,include,share} in $T (as
# scripts/gpu-session.sh prepare unpacks it) and libcudart.so.13 / libcupti.so.13 from PyPI's
# nvidia-cuda-runtime and nvidia-cuda-cupti 13.0.85 wheels in $NV.
set -euo pipefail
T=${T:-$HOME/.cache/copper-tools/torch-2.11.0}
NV=${NV:-/tmp/nv/x/nvidia/cu13/lib}
C=${C:-$HOME/.cache/copper-tools/torch-2.11.0-cpu}
rm -rf "$C" && mkdir -p "$C/lib"
ln -s "$T/torch/include" "$C/include"; ln -s "$T/torch/share" "$C/share"
for f in "$T"/torch/lib/*; do
  case $(basename "$f") in libtorch_cuda*|libc10_cuda*|libcaffe2_nvrtc*|libtorch_nvshmem*|libtorch.so|libtorch_python*) ;; *) ln -s "$f" "$C/lib/";; esac
done
cp "$NV/libcudart.so.13" "$NV/libcupti.so.13" "$C/lib/"
echo 'void copper_empty_libtorch_stub(void) {}' | gcc -shared -fPIC -x c -o "$C/lib/libtorch.so" -
LIBTORCH=$C LIBTORCH_BYPASS_VERSION_CHECK=1 CARGO_TARGET_DIR=target-tch \
  cargo build --release -p cli -p model --bin copper --bin netbench --features cli/tch,model/tch
echo "run with LD_LIBRARY_PATH=$C/lib target-tch/release/netbench --device libtorch-cpu ..."
