#!/usr/bin/env bash
# Build the CUDA reference programs of bench/bench_cuda.py with plain nvcc (no CMake, no network).
#
#   bench/build_cuda_refs.sh [ARCH]        ARCH: an nvcc -arch value, default sm_90 (H100, H200)
#
# Sources are staged (never committed) under .bench-src/ in the repository root; see
# bench/README.md "CUDA" for how they were exported. Binaries go to .bench-src/bin/:
#   babelstream-cuda   BabelStream 5.0, CUDA model (src/main.cpp + src/cuda/CUDAStream.cu)
#   mixbench-cuda      mixbench, CUDA variant (mixbench-cuda/)
# Environment: NVCC (default: /usr/local/cuda/bin/nvcc, else nvcc on PATH).
#
# The flags follow the projects' own CMake files:
# * BabelStream (CMakeLists.txt + src/cuda/model.cmake): definitions CUDA (the model) and DEFAULT
#   (MEM=DEFAULT: cudaMalloc'd device arrays), Release flags -O3 (its -march=native is for the host
#   compiler only and is left out so the binary runs on another host CPU), -arch=$ARCH.
#   TBSIZE is fixed at 1024 in CUDAStream.h. C++17 (the project asks for C++11 or later).
# * mixbench-cuda (mixbench-cuda/CMakeLists.txt): --cudart=static, -Wno-deprecated-gpu-targets,
#   C++11 or later; CMake writes version_info.h from `git describe --tags --always`: it is written
#   here from .bench-src/mixbench/SOURCE.txt (no git at build time).
# -arch=sm_XY embeds SASS for sm_XY and PTX for compute_XY. cudart is linked statically (nvcc's
# default, stated explicitly), so the binaries need only the driver on the GPU machine.
set -euo pipefail

ARCH="${1:-sm_90}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/.bench-src"
BIN="$SRC/bin"

if [[ -n "${NVCC:-}" ]]; then
  :
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
  NVCC=/usr/local/cuda/bin/nvcc
elif command -v nvcc >/dev/null 2>&1; then
  NVCC="$(command -v nvcc)"
else
  echo "build_cuda_refs: nvcc not found (set NVCC=/path/to/nvcc)" >&2
  exit 1
fi

missing=0
for f in babelstream/src/main.cpp babelstream/src/cuda/CUDAStream.cu mixbench/mixbench-cuda/main-cuda.cpp \
         mixbench/mixbench-cuda/mix_kernels_cuda.cu; do
  if [[ ! -f "$SRC/$f" ]]; then
    echo "build_cuda_refs: missing $SRC/$f" >&2
    missing=1
  fi
done
if [[ $missing -ne 0 ]]; then
  cat >&2 <<'EOF'
Stage the sources first (bench/README.md, section CUDA), e.g. from git clones or mirrors:
  mkdir -p .bench-src/babelstream .bench-src/mixbench
  git --git-dir=<BabelStream>/.git archive v5.0 LICENSE README.md CMakeLists.txt src/main.cpp src/Stream.h src/cuda \
      | tar -x -C .bench-src/babelstream
  git --git-dir=<mixbench>/.git archive 236a0be007a5937e9ffb4a6c7eb1fafed6108e80 LICENSE README.md mixbench-cuda \
      | tar -x -C .bench-src/mixbench
EOF
  exit 1
fi

mkdir -p "$BIN"
echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
echo "arch: $ARCH"

# ---- BabelStream 5.0, CUDA model ----------------------------------------------------------------
BS="$SRC/babelstream"
cmd=("$NVCC" -O3 -std=c++17 -DCUDA -DDEFAULT "-arch=$ARCH" --cudart=static
     -I"$BS/src" -I"$BS/src/cuda"
     "$BS/src/main.cpp" "$BS/src/cuda/CUDAStream.cu" -o "$BIN/babelstream-cuda")
echo "+ ${cmd[*]}"
"${cmd[@]}"

# ---- mixbench-cuda --------------------------------------------------------------------------------
MB="$SRC/mixbench/mixbench-cuda"
rev="unknown"
if [[ -f "$SRC/mixbench/SOURCE.txt" ]]; then
  rev="$(sed -n 's/.*git describe: \([^) ]*\).*/\1/p' "$SRC/mixbench/SOURCE.txt" | head -1)"
  rev="${rev:-unknown}"
fi
GEN="$SRC/mixbench/generated"
mkdir -p "$GEN"
printf '#define VERSION_INFO "%s"\n' "$rev" > "$GEN/version_info.h"
cmd=("$NVCC" -O3 -std=c++17 "-arch=$ARCH" --cudart=static -Wno-deprecated-gpu-targets
     -I"$GEN" -I"$MB"
     "$MB/main-cuda.cpp" "$MB/mix_kernels_cuda.cu" -o "$BIN/mixbench-cuda")
echo "+ ${cmd[*]}"
"${cmd[@]}"

{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nvcc: $("$NVCC" --version | tail -1)"
  echo "host compiler: $(${CXX:-c++} --version 2>/dev/null | head -1 || echo unknown)"
  echo "arch: $ARCH"
  echo "babelstream: $(sed -n 's/^commit: //p' "$BS/SOURCE.txt" 2>/dev/null | head -1)"
  echo "mixbench: $(sed -n 's/^commit: //p' "$SRC/mixbench/SOURCE.txt" 2>/dev/null | head -1)"
} > "$BIN/BUILD_INFO.txt"
ls -l "$BIN"
