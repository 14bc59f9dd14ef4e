"""The Metal kernel sources (shaders/metal/*.metal) against their CUDA twins (shaders/cuda/*.cu),
everywhere: Metal Shading Language cannot be compiled off a Mac, so what can be checked without one
is checked here.

- Twins: every CUDA entry of the twin files has a Metal kernel of the same name (fp64 ones
  excepted, by an explicit list), every Metal kernel a CUDA one, and every entry a kernel table
  names on Metal exists.
- Arguments: [[buffer(i)]] indices 0..k-1 in order, and the same arguments as the CUDA twin
  (core/backend.h: a device pointer for a pointer, `constant float&` for a double, `constant long&`
  for a long long, `constant ulong&` for the launch count).
- Function constants: declared at file scope with distinct indices, every -D constant the CUDA twin
  requires (BLOCK aside: on Metal it is the threadgroup size) among them; no `double` anywhere.
- gemm.cu compiles with nvcc (test_cuda_shaders.py compiles only the FMA and STREAM tables' files).
- The tiled GEMM's index mapping covers C exactly once, and a NumPy emulation of its tile loop
  meets the fp32 GEMM bound.
- Where a clang with _Float16 is installed, the .metal files themselves are compiled as C++ against
  a minimal stand-in for <metal_stdlib> and run on the host: every kernel's output equals the NumPy
  reference bit for bit. That proves their logic and C++ syntax, not that Apple's compiler accepts
  them (address spaces, attributes and pragmas are mapped to nothing).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

import numpy as np
import pytest

from apple_roofline.shaders import shader_path
from apple_roofline.suites import gemm as gemm_suite
from apple_roofline.suites.base import KernelDef, pattern
from apple_roofline.suites.fma import CHAIN_A, FMA_KERNELS
from apple_roofline.suites.gemm import check_gemm
from apple_roofline.suites.peak import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream import Q, STREAM_KERNELS

#: Kernel files that exist on both backends (shaders/cuda/<stem>.cu and shaders/metal/<stem>.metal).
TWIN_STEMS = ("stream", "fma", "gemm", "dispatch")
#: CUDA entries without a Metal twin, and why.
NO_METAL_TWIN: Dict[str, str] = {
    "scalar_indep8_f64": "Apple GPUs have no FP64 and MSL has no double",
    "dispatch_null_stamp": "MSL has no clock a kernel can read: Metal's start is the command buffer's GPUStartTime",
    "dispatch_tiny_stamp": "MSL has no clock a kernel can read: Metal's start is the command buffer's GPUStartTime",
}
#: Thread-position attributes a Metal kernel may take besides its [[buffer(i)]] arguments.
POSITION_ATTRIBUTES = {"thread_position_in_grid", "threadgroup_position_in_grid", "thread_index_in_threadgroup"}

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


# ---- parsing ----------------------------------------------------------------------------------------


def _read(name: str) -> str:
    with open(shader_path(name), encoding="utf-8") as f:
        return f.read()


def _code(src: str) -> str:
    """``src`` without comments (the shaders have no string literals containing comment markers)."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


def _split_top(params: str) -> List[str]:
    """Split a parameter list at commas outside parentheses and brackets."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def cuda_entries(src: str) -> Dict[str, List[str]]:
    """``extern "C" __global__`` entries of a .cu file: name -> parameter declarations."""
    pat = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)')
    return {m.group(1): _split_top(m.group(2)) for m in pat.finditer(_code(src))}


def metal_kernels(src: str) -> Dict[str, List[str]]:
    """``kernel void`` functions of a .metal file: name -> parameter declarations."""
    code = _code(src)
    out: Dict[str, List[str]] = {}
    for m in re.finditer(r"\bkernel\s+void\s+(\w+)\s*\(", code):
        depth, j = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            j += 1
        assert m.group(1) not in out, f"kernel {m.group(1)} defined twice"
        out[m.group(1)] = _split_top(code[m.end():j - 1])
    return out


def cuda_kind(param: str) -> str:
    """The backend-level kind of a CUDA parameter: ptr, const-ptr, float, int or count."""
    p = " ".join(param.split())
    if "*" in p:
        return "const-ptr" if p.startswith("const ") else "ptr"
    if p.startswith("unsigned long long "):
        return "count"
    if p.startswith("long long "):
        return "int"
    if p.startswith("double "):
        return "float"
    raise AssertionError(f"CUDA parameter '{param}' is none of the backend's argument kinds")


def metal_args(params: List[str]) -> List[Tuple[int, str]]:
    """(buffer index, kind) of each [[buffer(i)]] parameter, in declaration order; the other
    parameters must be thread-position attributes of type uint."""
    out: List[Tuple[int, str]] = []
    for param in params:
        p = " ".join(param.split())
        m = re.fullmatch(r"(.*?)\s*\[\[\s*buffer\(\s*(\d+)\s*\)\s*\]\]", p)
        if m is None:
            a = re.fullmatch(r"uint \w+ \[\[\s*(\w+)\s*\]\]", p)
            assert a is not None and a.group(1) in POSITION_ATTRIBUTES, \
                f"parameter '{param}' is neither a buffer nor a uint thread position"
            continue
        decl, index = m.group(1), int(m.group(2))
        if re.fullmatch(r"(const device|device const) [\w]+ ?\* ?\w+", decl):
            kind = "const-ptr"
        elif re.fullmatch(r"device [\w]+ ?\* ?\w+", decl):
            kind = "ptr"
        else:
            scalars = {"float": "float", "long": "int", "ulong": "count"}
            s = re.fullmatch(r"constant (\w+) ?& ?\w+", decl)
            assert s is not None and s.group(1) in scalars, \
                f"Metal parameter '{param}' is none of the backend's argument kinds"
            kind = scalars[s.group(1)]
        out.append((index, kind))
    return out


def function_constants(src: str) -> List[Tuple[str, str, int]]:
    """(type, name, index) of each ``constant T name [[function_constant(i)]];``."""
    pat = re.compile(r"\bconstant\s+(\w+)\s+(\w+)\s*\[\[\s*function_constant\(\s*(\d+)\s*\)\s*\]\]\s*;")
    return [(m.group(1), m.group(2), int(m.group(3))) for m in pat.finditer(_code(src))]


def required_macros(cuda_src: str) -> Set[str]:
    """-D constants a .cu file refuses to compile without (``#ifndef X`` followed by ``#error``)."""
    return set(re.findall(r"#ifndef\s+(\w+)\s*\n\s*#error", cuda_src))


def _twins() -> Iterator[Tuple[str, Dict[str, List[str]], Dict[str, List[str]]]]:
    for stem in TWIN_STEMS:
        yield stem, cuda_entries(_read(f"{stem}.cu")), metal_kernels(_read(f"{stem}.metal"))


def _metal_files() -> List[str]:
    folder = os.path.dirname(shader_path("fma.metal"))
    return sorted(f for f in os.listdir(folder) if f.endswith(".metal"))


# ---- (a) twins --------------------------------------------------------------------------------------


def test_every_cuda_entry_has_a_metal_twin() -> None:
    all_cuda: Set[str] = set()
    for stem, cuda, metal in _twins():
        assert cuda, f"no CUDA entries parsed from {stem}.cu"
        all_cuda |= set(cuda)
        missing = sorted(set(cuda) - set(metal) - set(NO_METAL_TWIN))
        assert not missing, f"{stem}.metal lacks the twins of {missing}"
        extra = sorted(set(metal) - set(cuda))
        assert not extra, f"{stem}.metal has kernels without a CUDA twin in {stem}.cu: {extra}"
        excused = sorted(set(metal) & set(NO_METAL_TWIN))
        assert not excused, f"{excused} are listed in NO_METAL_TWIN but exist in {stem}.metal"
    stale = sorted(set(NO_METAL_TWIN) - all_cuda)
    assert not stale, f"NO_METAL_TWIN names entries no CUDA file has: {stale}"


def test_every_metal_file_has_a_cuda_twin() -> None:
    assert sorted(f"{s}.metal" for s in TWIN_STEMS) == _metal_files()


def _table_kernel_defs() -> List[KernelDef]:
    kdefs = [kernel_def(d, v) for d, v in PEAK_VARIANTS] + [sk.kernel_def() for sk in STREAM_KERNELS]
    tiled: Optional[KernelDef] = getattr(gemm_suite, "TILED_GEMM", None)
    return kdefs + ([tiled] if tiled is not None else [])


def test_every_metal_entry_of_the_tables_exists() -> None:
    """Entries the kernel tables name on Metal are kernels of the named file; every Metal-capable
    dtype (not fp64) of a table entry with a CUDA twin file has a Metal kernel to name."""
    kernels = {f: metal_kernels(_read(f)) for f in _metal_files()}
    for k in _table_kernel_defs():
        src = k.sources.get("metal")
        if src is not None:
            assert src[0] in kernels, f"{k.suite}/{k.name}/{k.dtype} names {src[0]}, which does not exist"
            assert src[1] in kernels[src[0]], f"{src[0]} has no kernel {src[1]} ({k.suite}/{k.name}/{k.dtype})"
        cuda = k.sources.get("cuda")
        if cuda is not None and cuda[1] not in NO_METAL_TWIN:
            stem = os.path.splitext(cuda[0])[0]
            assert cuda[1] in kernels[f"{stem}.metal"], f"{cuda[1]} ({cuda[0]}) has no Metal twin"


# ---- (b) arguments ----------------------------------------------------------------------------------


def test_metal_arguments_match_the_cuda_twins() -> None:
    for stem, cuda, metal in _twins():
        for name, params in metal.items():
            args = metal_args(params)
            where = f"{stem}.metal:{name}"
            assert [i for i, _ in args] == list(range(len(args))), f"{where}: buffer indices {[i for i, _ in args]}"
            want = [cuda_kind(p) for p in cuda[name]]
            got = [kind for _, kind in args]
            assert got == want, f"{where}: arguments {got}, CUDA twin {want}"
            assert want[-1] == "count" and "count" not in want[:-1], f"{name}: the launch count must come last"
            assert any("thread_position_in_grid" in p or "threadgroup_position_in_grid" in p for p in params), where


# ---- (c) function constants, (f) no double ----------------------------------------------------------


def test_function_constants_are_declared() -> None:
    for f in _metal_files():
        code = _code(_read(f))
        fcs = function_constants(_read(f))
        names = [n for _, n, _ in fcs]
        indices = [i for _, _, i in fcs]
        assert len(set(indices)) == len(indices), f"{f}: function constant indices {indices} repeat"
        assert len(set(names)) == len(names), f"{f}: function constants {names} repeat"
        for _, name, _ in fcs:
            assert len(re.findall(rf"\b{name}\b", code)) > 1, f"{f}: function constant {name} is never used"
        stem = os.path.splitext(f)[0]
        for macro in required_macros(_read(f"{stem}.cu")) - {"BLOCK"}:
            assert macro in names, f"{f} does not declare {stem}.cu's -D{macro} as a function constant"
    # the FMA iteration count: int, as the backend sets integer constants
    assert ("int", "F", 0) in function_constants(_read("fma.metal"))


def test_no_metal_file_uses_double() -> None:
    for f in _metal_files():
        code = _code(_read(f))
        assert not re.search(r"\bdouble\b", code), f"{f} uses double (MSL has none)"
        for cuda_only in ("__global__", "__shared__", "__syncthreads", "threadIdx", "blockIdx", "fmaf", "make_float4"):
            assert cuda_only not in code, f"{f} uses CUDA's {cuda_only}"
        assert re.findall(r"#include\s*<([^>]+)>", code) == ["metal_stdlib"], f"{f} includes more than <metal_stdlib>"


# ---- (d) gemm.cu compiles -----------------------------------------------------------------------------


def _nvcc_ptx(path: str, defines: Dict[str, object], out: str) -> "subprocess.CompletedProcess[str]":
    cmd = [str(NVCC), "-ptx", "-arch=sm_90", "-std=c++17", *[f"-D{k}={v}" for k, v in defines.items()],
           "-x", "cu", path, "-o", out]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_gemm_cu_compiles(tmp_path: "os.PathLike[str]") -> None:
    out = os.path.join(str(tmp_path), "gemm.ptx")
    p = _nvcc_ptx(shader_path("gemm.cu"), {"BLOCK": 256}, out)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        assert set(re.findall(r"\.entry\s+(\w+)", f.read())) == {"gemm_tiled16_f32"}
    p = _nvcc_ptx(shader_path("gemm.cu"), {"BLOCK": 512}, out)
    assert p.returncode != 0 and "BLOCK=256" in p.stderr, "gemm.cu must refuse BLOCK != 256"


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_cuda_entry_parser_matches_nvcc(tmp_path: "os.PathLike[str]") -> None:
    """The entries this file's parser finds are exactly the kernels nvcc emits."""
    for stem in TWIN_STEMS:
        out = os.path.join(str(tmp_path), f"{stem}.ptx")
        p = _nvcc_ptx(shader_path(f"{stem}.cu"), {"BLOCK": 256, "F": 4}, out)
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            assert set(re.findall(r"\.entry\s+(\w+)", f.read())) == set(cuda_entries(_read(f"{stem}.cu")))


# ---- (e) the tiled GEMM's indexing ------------------------------------------------------------------

TILE = 16
GROUP = 256


def tiled16_element(g: int, t: int, N: int) -> Tuple[int, int]:
    """(row, col) of C computed by thread t of threadgroup (block) g, as gemm_tiled16_f32 maps them."""
    tiles = N // TILE
    ty, tx = t // TILE, t % TILE
    return (g // tiles) * TILE + ty, (g % tiles) * TILE + tx


@pytest.mark.parametrize("N", [16, 32, 48])
def test_tiled16_mapping_is_a_bijection(N: int) -> None:
    n = N * N
    groups = -(-n // GROUP)
    assert n % GROUP == 0, "N a multiple of 16 makes N·N a whole number of groups"
    cells = [tiled16_element(g, t, N) for g in range(groups) for t in range(GROUP) if g * GROUP + t < n]
    assert len(cells) == n and set(cells) == {(r, c) for r in range(N) for c in range(N)}


def emulate_tiled16(a: np.ndarray, b: np.ndarray, transpose_b_tile: bool = False) -> np.ndarray:
    """gemm_tiled16_f32 in NumPy, every thread at once: tile loads into per-group As/Bs, then the kk
    loop of FMAs in fp32 (the product exact in float64, one rounding of the sum to float32; an FMA up
    to a rare double-rounding tie), in the kernel's order. ``transpose_b_tile`` stores Bs transposed:
    a wrong kernel, for the negative control."""
    N = a.shape[0]
    n = N * N
    groups = -(-n // GROUP)
    g = np.repeat(np.arange(groups), GROUP)
    t = np.tile(np.arange(GROUP), groups)
    valid = g * GROUP + t < n
    ty, tx = t // TILE, t % TILE
    tiles = N // TILE
    row, col = (g // tiles) * TILE + ty, (g % tiles) * TILE + tx
    af, bf = a.ravel(), b.ravel()
    acc = np.zeros(g.size, np.float32)
    for k0 in range(0, N, TILE):
        As = np.zeros((groups, TILE, TILE), np.float32)
        Bs = np.zeros((groups, TILE, TILE), np.float32)
        v = valid
        As[g[v], ty[v], tx[v]] = af[row[v] * N + k0 + tx[v]]
        if transpose_b_tile:
            Bs[g[v], tx[v], ty[v]] = bf[(k0 + ty[v]) * N + col[v]]
        else:
            Bs[g[v], ty[v], tx[v]] = bf[(k0 + ty[v]) * N + col[v]]
        for kk in range(TILE):  # barrier: every load of the tile is done
            prod = As[g, ty, kk].astype(np.float64) * Bs[g, kk, tx].astype(np.float64)
            acc = (prod + acc.astype(np.float64)).astype(np.float32)
    c = np.full(n, np.nan, np.float32)
    c[row[valid] * N + col[valid]] = acc[valid]
    return c.reshape(N, N)


@pytest.mark.parametrize("N", [16, 32, 48])
def test_tiled16_emulation_meets_the_fp32_bound(N: int) -> None:
    rng = np.random.default_rng(N)
    a = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    ok, msg = check_gemm(a, b, emulate_tiled16(a, b), "fp32")
    assert ok, msg
    if N > TILE:
        assert not check_gemm(a, b, emulate_tiled16(a, b, transpose_b_tile=True), "fp32")[0]


# ---- the .metal files on the host, through a C++ stand-in for <metal_stdlib> ------------------------

_STDLIB = r"""
#pragma once
#include <barrier>
#include <cmath>
#define kernel extern "C"
#define device
#define constant const
#define threadgroup static /* one threadgroup runs at a time */
namespace metal {
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
template <class T> struct vec4 {
  T x, y, z, w;
  vec4() = default;
  explicit vec4(T s) : x(s), y(s), z(s), w(s) {}
  vec4(T a, T b, T c, T d) : x(a), y(b), z(c), w(d) {}
  vec4 operator+(vec4 o) const { return vec4(T(x + o.x), T(y + o.y), T(z + o.z), T(w + o.w)); }
};
typedef vec4<float> float4;
typedef vec4<half> half4;
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
/* exact in double for the bounded values of the chains, then one rounding */
inline half fma(half a, half b, half c) { return half(double(a) * double(b) + double(c)); }
template <class T> vec4<T> fma(vec4<T> a, vec4<T> b, vec4<T> c) {
  return vec4<T>(fma(a.x, b.x, c.x), fma(a.y, b.y, c.y), fma(a.z, b.z, c.z), fma(a.w, b.w, c.w));
}
enum class mem_flags { mem_threadgroup };
inline std::barrier<>* group_barrier = nullptr;
inline void threadgroup_barrier(mem_flags) { group_barrier->arrive_and_wait(); }
}
"""

_GEMM_DRIVER = r"""
#include <thread>
#include <vector>
#include <metal_stdlib>
using namespace metal;
kernel void gemm_tiled16_f32(const float*, const float*, float*, const long&, const ulong&, uint, uint);
kernel void run_gemm(const float* A, const float* B, float* C, long N) {
  const ulong n = ulong(N) * ulong(N);
  for (uint g = 0; g < (n + 255) / 256; ++g) {
    std::barrier<> bar(256);
    group_barrier = &bar;
    std::vector<std::thread> threads;
    for (uint t = 0; t < 256; ++t) threads.emplace_back([=, &n] { gemm_tiled16_f32(A, B, C, N, n, g, t); });
    for (auto& th : threads) th.join();
  }
}
"""

_CXX_FLAGS = ["-std=c++20", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-attributes",
              "-Wno-unused-parameter", "-ffp-contract=off", "-Xclang", "-ffloat16-excess-precision=none"]


def _host_cxx(tmp: str) -> Optional[str]:
    """A clang++ that has _Float16 (with per-operation rounding) and std::barrier, or None."""
    probe = os.path.join(tmp, "probe.cpp")
    with open(probe, "w") as f:
        f.write("#include <barrier>\n_Float16 h(_Float16 a, _Float16 b) { return a + b; }\n")
    names = ["clang++"] + [f"clang++-{v}" for v in range(22, 15, -1)]
    for cxx in filter(None, (shutil.which(n) for n in names)):
        p = subprocess.run([cxx, *_CXX_FLAGS, "-x", "c++", probe, "-o", probe + ".so"], capture_output=True)
        if p.returncode == 0:
            return cxx
    return None


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], ctypes.CDLL]:
    tmp = str(tmp_path_factory.mktemp("metal_host"))
    cxx = _host_cxx(tmp)
    if cxx is None:
        pytest.skip("no clang++ with _Float16 and C++20 <barrier>")
    with open(os.path.join(tmp, "metal_stdlib"), "w") as f:
        f.write(_STDLIB)
    cache: Dict[Tuple[str, int], ctypes.CDLL] = {}

    def build(stem: str, F: int = 0) -> ctypes.CDLL:
        if (stem, F) not in cache:
            src = _read(f"{stem}.metal").replace("[[function_constant(0)]]", f"= {F}")
            cpp = os.path.join(tmp, f"{stem}_{F}.cpp")
            with open(cpp, "w") as f:
                f.write(src + (_GEMM_DRIVER if stem == "gemm" else ""))
            so = cpp[:-4] + ".so"
            p = subprocess.run([str(cxx), *_CXX_FLAGS, f"-I{tmp}", "-x", "c++", cpp, "-o", so, "-lpthread"],
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 0, f"{stem}.metal does not compile as C++:\n{p.stderr[-4000:]}"
            cache[(stem, F)] = ctypes.CDLL(so)
        return cache[(stem, F)]

    return build


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


@pytest.mark.parametrize("F", [1, 7, 64])
def test_fma_metal_on_the_host_equals_the_reference(host_kernels: Callable[[str, int], ctypes.CDLL], F: int) -> None:
    lib = host_kernels("fma", F)
    entries = metal_kernels(_read("fma.metal"))
    for fk in FMA_KERNELS.values():
        for dtype, t, bits in (("fp32", np.float32, np.uint32), ("fp16", np.float16, np.uint16)):
            entry = fk.entry(dtype)
            if entry not in entries:
                continue
            x = pattern(dtype, -0.5, 0.5, seed=7)[:512].astype(t)
            n = x.size // fk.elems_per_item
            out = np.full_like(x, np.nan)
            fn = getattr(lib, entry)
            count, a = ctypes.c_ulong(n), ctypes.c_float(CHAIN_A)
            for i in range(n + 2):  # two threads past n: the guard
                if fk.takes_a:
                    fn(_ptr(x), _ptr(out), ctypes.byref(a), ctypes.byref(count), ctypes.c_uint(i))
                else:
                    fn(_ptr(x), _ptr(out), ctypes.byref(count), ctypes.c_uint(i))
            want = fk.reference(x, F, dtype)
            assert np.array_equal(out.view(bits), want.view(bits)), f"{entry} at F={F} differs from the reference"


def test_stream_metal_on_the_host_equals_the_reference(host_kernels: Callable[[str, int], ctypes.CDLL]) -> None:
    lib = host_kernels("stream", 0)
    n = 300  # float4 items
    q = np.float32(Q)
    for sk in STREAM_KERNELS:
        arrs = [pattern("fp32", 0.5, 1.5, seed)[:4 * n].astype(np.float32) for seed in (1, 2, 3)]
        a64, b64, c64 = (v.astype(np.float64) for v in arrs)
        # the reference in float64 rounded once: triad's b + q·c is one FMA per lane
        want = sk.ref(a64, b64, c64, q).astype(np.float32)
        fn = getattr(lib, f"stream_{sk.name}_f32")
        for i in range(n + 2):
            fn(*(_ptr(v) for v in arrs), ctypes.byref(ctypes.c_float(q)), ctypes.byref(ctypes.c_ulong(n)),
               ctypes.c_uint(i))
        assert np.array_equal(arrs[sk.output], want), f"stream_{sk.name}_f32"


@pytest.mark.parametrize("N", [16, 48])
def test_gemm_metal_on_the_host_meets_the_fp32_bound(host_kernels: Callable[[str, int], ctypes.CDLL], N: int) -> None:
    lib = host_kernels("gemm", 0)
    rng = np.random.default_rng(N)
    a = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    c = np.full((N, N), np.nan, np.float32)
    lib.run_gemm(_ptr(a), _ptr(b), _ptr(c), ctypes.c_long(N))
    ok, msg = check_gemm(a, b, c, "fp32")
    assert ok, msg
    assert np.array_equal(c, emulate_tiled16(a, b)), "the kernel and its NumPy emulation disagree"


def test_dispatch_metal_on_the_host_counts_launches(host_kernels: Callable[[str, int], ctypes.CDLL]) -> None:
    """dispatch_tiny adds 1 to each of its 256 float4 per launch (and no thread past n writes);
    dispatch_null takes only the launch count and writes nothing."""
    lib = host_kernels("dispatch", 0)
    x = np.zeros(4 * 260, np.float32)
    n = ctypes.c_ulong(256)
    for _ in range(3):
        for i in range(260):  # four threads past n: the guard
            lib.dispatch_tiny(_ptr(x), ctypes.byref(n), ctypes.c_uint(i))
    assert np.all(x[:1024] == 3.0) and np.all(x[1024:] == 0.0)
    lib.dispatch_null(ctypes.byref(ctypes.c_ulong(1)), ctypes.c_uint(0))
