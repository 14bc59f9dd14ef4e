#!/usr/bin/env bash
# Compile and link the native core for arm64 macOS against a real macOS SDK, without a Mac.
#
#   MACOS_SDK=/path/to/MacOSX14.0.sdk tools/check-macos.sh
#
# Needs clang-19 and lld-19 (Debian: apt-get install clang-19 lld-19). Compiles every C++ source of
# the core and the CPU backend (and, once they exist, every Objective-C++ .mm file of the Metal
# backend, under ARC) for arm64-apple-macos with -Wall -Wextra -Werror
# -Werror=unguarded-availability-new, then links them with lld into a dylib against Accelerate
# (the CPU backend's BLAS on macOS) and the frameworks the Metal backend uses; then compiles the
# nanobind bindings and links the whole extension module (below: with this interpreter's Python
# headers, a macOS Python's not being at hand). What this cannot check: anything at run time
# (docs/design/testing.md, "Checking without a Mac").
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
# The availability check must bite: a macOS 14 API (MTLDevice.architecture) used without
# @available has to fail to compile for a macOS 13 target with these flags.
printf '#import <Metal/Metal.h>\nconst char* f(id<MTLDevice> d) { return d.architecture.name.UTF8String; }\n' > "$out/canary.mm"
if "$CXX" "${common[@]}" -x objective-c++ -fobjc-arc -fsyntax-only "$out/canary.mm" 2>/dev/null; then
  echo "an unguarded macOS 14 API compiled for $TARGET: -Werror=unguarded-availability-new is not in effect" >&2
  exit 1
fi
echo "  (an unguarded macOS 14 API is rejected, as it must be)"
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

# The nanobind bindings and nanobind itself, compiled for the same target: the bindings with the
# flags above, nanobind's own sources (third-party) without -Werror. No macOS Python's headers are
# at hand, so this interpreter's are used: the C API they declare is the same on every LP64
# platform; only pyconfig.h (feature macros of the build machine) differs, which the bindings do not
# read. The module is then linked below with every symbol resolved except the Python C API's, which
# the interpreter provides at load time (as `-undefined dynamic_lookup` does for every macOS
# extension module, here limited to the Py* / _Py* names).
PY=${PYTHON:-python3}
mod_objs=()
if nb_inc=$("$PY" -m nanobind --include_dir 2>/dev/null); then
  py_inc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
  nb_flags=(-I"$nb_inc" -I"$nb_inc/../ext/robin_map/include" -I"$py_inc" -fvisibility=hidden -DNB_COMPACT_ASSERTIONS)
  for f in "$root"/native/bindings/*.cpp; do
    obj="$out/bindings_$(basename "$f").o"
    echo "  $CXX ${f#"$root"/}"
    "$CXX" "${common[@]}" "${nb_flags[@]}" -c "$f" -o "$obj"
    mod_objs+=("$obj")
  done
  nb_src="$nb_inc/../src/nb_combined.cpp"
  echo "  $CXX nanobind/src/nb_combined.cpp (third-party: no -Werror)"
  "$CXX" -target "$TARGET" -isysroot "$MACOS_SDK" -std=c++17 -stdlib=libc++ -O2 -w "${nb_flags[@]}" \
    -c "$nb_src" -o "$out/nanobind.o"
  mod_objs+=("$out/nanobind.o")
else
  echo "nanobind is not importable by $PY: the bindings cannot be checked (pip install nanobind)" >&2
  exit 2
fi

echo "linking with $LLD"
frameworks=(Accelerate Foundation Metal MetalPerformanceShaders IOKit CoreFoundation CoreML)
# An SDK unpacked without its symlinks keeps a framework's stub only under Versions/<v>/ (Foundation
# in some copies of the 14.0 SDK): link through a folder of links to those stubs, searched first.
mkdir -p "$out/frameworks"
for fw in "${frameworks[@]}"; do
  dir="$MACOS_SDK/System/Library/Frameworks/$fw.framework"
  [ -e "$dir/$fw.tbd" ] && continue
  stub=$(ls "$dir"/Versions/*/"$fw.tbd" 2>/dev/null | head -n 1 || true)
  [ -n "$stub" ] || { echo "no $fw.tbd in $dir" >&2; exit 2; }
  mkdir -p "$out/frameworks/$fw.framework" && ln -s "$stub" "$out/frameworks/$fw.framework/$fw.tbd"
done
"$CXX" -target "$TARGET" -isysroot "$MACOS_SDK" -stdlib=libc++ -fuse-ld="$LLD" -dynamiclib \
  -o "$out/libapple_roofline_core.dylib" "${objs[@]}" -F"$out/frameworks" \
  $(printf -- '-framework %s ' "${frameworks[@]}") \
  -Wl,-U,___isPlatformVersionAtLeast
# (-U: @available / __builtin_available call compiler-rt's __isPlatformVersionAtLeast, which lives
# in libclang_rt.osx.a: Apple's toolchain links it, Debian's clang does not ship it for Darwin.)

echo "linking the extension module (_core.so) with $LLD"
NM=${NM:-llvm-nm-19}
command -v "$NM" >/dev/null || NM=llvm-nm
python_api=$("$NM" -u "${objs[@]}" "${mod_objs[@]}" 2>/dev/null | awk '{print $NF}' | grep -E '^__?Py|^__?PY' | sort -u)
[ -n "$python_api" ] || { echo "no Python C API symbol found in the bindings' objects ($NM)" >&2; exit 2; }
"$CXX" -target "$TARGET" -isysroot "$MACOS_SDK" -stdlib=libc++ -fuse-ld="$LLD" -bundle \
  -o "$out/_core.so" "${objs[@]}" "${mod_objs[@]}" -F"$out/frameworks" \
  $(printf -- '-framework %s ' "${frameworks[@]}") \
  -Wl,-U,___isPlatformVersionAtLeast $(printf -- '-Wl,-U,%s ' $python_api)
echo "ok: ${#objs[@]} core files and ${#mod_objs[@]} binding files compiled, the core and the module linked for $TARGET"
