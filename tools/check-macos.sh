#!/usr/bin/env bash
# Compile and link the native core for arm64 macOS against a real macOS SDK, without a Mac.
#
#   MACOS_SDK=/path/to/MacOSX14.0.sdk tools/check-macos.sh
#
# Needs clang-19 and lld-19 (Debian: apt-get install clang-19 lld-19). Compiles every C++ source of
# the core and the CPU backend (and, once they exist, every Objective-C++ .mm file of the Metal
# backend, under ARC) for arm64-apple-macos with -Wall -Wextra -Werror
# -Werror=unguarded-availability-new, then links them with lld into a dylib against Accelerate
# (the CPU backend's BLAS on macOS) and the frameworks the Metal backend uses. The nanobind
# bindings are left out: they need a macOS Python's headers. What this cannot check: anything at
# run time (docs/design.md, "Checking without a Mac").
set -euo pipefail
: "${MACOS_SDK:?set MACOS_SDK to a MacOSX*.sdk folder}"
[ -d "$MACOS_SDK" ] || { echo "MACOS_SDK=$MACOS_SDK is not a folder" >&2; exit 2; }
CXX=${CXX:-clang++-19}
LLD=${LLD:-lld}  # clang -fuse-ld=lld picks ld64.lld for Darwin targets
command -v "$CXX" >/dev/null || { echo "$CXX not found (apt-get install clang-19 lld-19)" >&2; exit 2; }
TARGET=${MACOS_TARGET:-arm64-apple-macos13.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

common=(-target "$TARGET" -isysroot "$MACOS_SDK" -std=c++17 -stdlib=libc++ -O2 -Wall -Wextra -Werror
        -Werror=unguarded-availability-new -DACCELERATE_NEW_LAPACK -I"$root/native")
objs=()
compile() {  # file, extra flags...
  local src=$1; shift
  local obj="$out/$(echo "${src#"$root"/}" | tr '/' '_').o"
  echo "  $CXX ${src#"$root"/}"
  "$CXX" "${common[@]}" "$@" -c "$src" -o "$obj"
  objs+=("$obj")
}

echo "compiling for $TARGET against $MACOS_SDK"
for f in "$root"/native/core/*.cpp "$root"/native/no_*.cpp "$root"/native/cpu/*.cpp; do
  [ -e "$f" ] || continue
  case "$f" in
    */no_metal.cpp) [ -d "$root/native/metal" ] && continue ;;  # replaced by the Metal backend
    */no_coreml.cpp) [ -e "$root/native/metal/coreml.mm" ] && continue ;;  # replaced by metal/coreml.mm
    */cpu/kernels.cpp|*/cpu/idiv.cpp|*/cpu/hierarchy.cpp) compile "$f" -O3 -ffp-contract=fast -mcpu=apple-m1; continue ;;
  esac
  compile "$f"
done
for f in "$root"/native/metal/*.mm; do
  [ -e "$f" ] || continue
  compile "$f" -x objective-c++ -fobjc-arc
done
for f in "$root"/native/metal/*.cpp; do
  [ -e "$f" ] || continue
  compile "$f"
done

# The nanobind bindings: syntax only, with this interpreter's Python headers (a macOS Python's are
# not at hand; the C API they use is the same).
PY=${PYTHON:-python3}
if nb_inc=$("$PY" -m nanobind --include_dir 2>/dev/null); then
  py_inc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
  for f in "$root"/native/bindings/*.cpp; do
    echo "  $CXX -fsyntax-only ${f#"$root"/}"
    "$CXX" "${common[@]}" -fsyntax-only -I"$nb_inc" -I"$nb_inc/../ext/robin_map/include" -I"$py_inc" "$f"
  done
else
  echo "  (bindings skipped: nanobind is not importable by $PY)"
fi

echo "linking with $LLD"
"$CXX" -target "$TARGET" -isysroot "$MACOS_SDK" -stdlib=libc++ -fuse-ld="$LLD" -dynamiclib \
  -o "$out/libapple_roofline_core.dylib" "${objs[@]}" \
  -framework Accelerate -framework Foundation -framework Metal -framework MetalPerformanceShaders \
  -framework IOKit -framework CoreFoundation -framework CoreML \
  -Wl,-U,___isPlatformVersionAtLeast
# (-U: @available / __builtin_available call compiler-rt's __isPlatformVersionAtLeast, which lives
# in libclang_rt.osx.a: Apple's toolchain links it, Debian's clang does not ship it for Darwin.)
echo "ok: ${#objs[@]} files compiled and linked for $TARGET"
