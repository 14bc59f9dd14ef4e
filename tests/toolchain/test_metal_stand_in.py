"""The .metal kernels compiled as C++ against a minimal stand-in for <metal_stdlib> and run on the host:
every kernel's output equals the NumPy reference bit for bit; graphics.metal's fragment functions run
per pixel (the rasteriser's pixel centres, a texture2d with nearest or linear repeat sampling) and
meet the graphics suites' references. That proves their logic and C++ syntax,
not that Apple's compiler accepts them (address spaces, attributes and pragmas are mapped to
nothing). Needs a clang++ with _Float16 and C++20 <barrier>; skips without one.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from typing import Callable, Dict, Optional, Tuple

import numpy as np
import pytest

from apple_roofline.graphics import kernels as G
from apple_roofline.suites.access.kernels import ACCESS_KERNELS, check_access
from apple_roofline.suites.base import pattern
from apple_roofline.suites.dualissue.kernels import CHAINS, DUAL_KERNELS, dual_input, kind_reference, kind_tolerance
from apple_roofline.suites.fma import CHAIN_A, FMA_KERNELS
from apple_roofline.suites.gemm.checks import check_gemm
from apple_roofline.suites.hierarchy.suite import MASK, TILE_WORDS, read_total, rmw_total, word_sums
from apple_roofline.suites.idiv.kernels import IDIV_DIVISOR, IDIV_KERNELS, idiv_input
from apple_roofline.suites.occupancy.suite import occupancy_reference, occupancy_source
from apple_roofline.suites.stream.suite import STREAM_KERNELS, Q
from shader_twins import emulate_tiled16, metal_kernels, read_shader

# ---- the .metal files on the host, through a C++ stand-in for <metal_stdlib> ------------------------

_STDLIB = r"""
#pragma once
#include <barrier>
#include <cmath>
#define kernel extern "C"
#define device
#define constant const
#define threadgroup static /* one threadgroup runs at a time */
#define vertex   /* stage functions: plain functions, called per vertex / pixel by a driver */
#define fragment
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
  vec4 operator-(vec4 o) const { return vec4(T(x - o.x), T(y - o.y), T(z - o.z), T(w - o.w)); }
  vec4 operator*(T s) const { return vec4(T(x * s), T(y * s), T(z * s), T(w * s)); }
  vec4 operator/(T s) const { return vec4(T(x / s), T(y / s), T(z / s), T(w / s)); }
};
template <class T> struct vec2 {
  T x, y;
  vec2() = default;
  explicit vec2(T s) : x(s), y(s) {}
  vec2(T a, T b) : x(a), y(b) {}
  vec2 operator+(vec2 o) const { return vec2(T(x + o.x), T(y + o.y)); }
  vec2 operator/(T s) const { return vec2(T(x / s), T(y / s)); }
};
typedef vec2<float> float2;
typedef vec4<float> float4;
typedef vec4<half> half4;
typedef vec2<uint> uint2;
typedef vec4<uint> uint4;
template <class T> T ctz(T x) { return T(__builtin_ctzll((unsigned long long)x)); }
template <class T, class U> T as_type(U u) {
  static_assert(sizeof(T) == sizeof(U)); T t; __builtin_memcpy(&t, &u, sizeof t); return t;
}
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
/* exact in double for the bounded values of the chains, then one rounding */
inline half fma(half a, half b, half c) { return half(double(a) * double(b) + double(c)); }
template <class T> vec4<T> fma(vec4<T> a, vec4<T> b, vec4<T> c) {
  return vec4<T>(fma(a.x, b.x, c.x), fma(a.y, b.y, c.y), fma(a.z, b.z, c.z), fma(a.w, b.w, c.w));
}
/* texture2d<float> over RGBA8 unorm texels (b / 255) and a sampler with normalized coordinates,
   repeat addressing, level 0 only: nearest takes the texel containing the point, linear the
   weighted mean of the four texels around it (weights from the point's offset from their centres). */
struct sampler { bool linear = false; };
struct level { float lod; explicit level(float l) : lod(l) {} };
template <class T> struct texture2d {
  const unsigned char* texels = nullptr;
  int size = 0;
  vec4<T> texel(int x, int y) const {
    x = ((x % size) + size) % size;
    y = ((y % size) + size) % size;
    const unsigned char* t = texels + 4 * (y * size + x);
    return vec4<T>(T(t[0]) / T(255), T(t[1]) / T(255), T(t[2]) / T(255), T(t[3]) / T(255));
  }
  vec4<T> sample(sampler s, float2 c, level) const {
    const float u = c.x * float(size), v = c.y * float(size);
    if (!s.linear) return texel(int(std::floor(u)), int(std::floor(v)));
    const float fu = u - 0.5f, fv = v - 0.5f;
    const int x0 = int(std::floor(fu)), y0 = int(std::floor(fv));
    const float ax = fu - float(x0), ay = fv - float(y0);
    const vec4<T> top = texel(x0, y0) * (1.0f - ax) + texel(x0 + 1, y0) * ax;
    const vec4<T> bottom = texel(x0, y0 + 1) * (1.0f - ax) + texel(x0 + 1, y0 + 1) * ax;
    return top * (1.0f - ay) + bottom * ay;
  }
};
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

_OCCUPANCY_DRIVER = r"""
#include <thread>
#include <vector>
/* one threadgroup of `group` threads at a time, each a thread of the host, meeting at the barrier */
kernel void run_occupancy(const float4* in, float4* out, ulong n, uint group) {
  for (uint g = 0; g < (n + group - 1) / group; ++g) {
    std::barrier<> bar(group);
    group_barrier = &bar;
    std::vector<std::thread> threads;
    for (uint t = 0; t < group; ++t) threads.emplace_back([=, &n] { occupancy_copy(in, out, n, g * group + t, t); });
    for (auto& th : threads) th.join();
  }
}
"""

_GRAPHICS_DRIVER = r"""
static void put(float* o, float4 c) { o[0] = c.x; o[1] = c.y; o[2] = c.z; o[3] = c.w; }
/* the rasteriser's view: fragment (x, y) at the pixel centre (x + 0.5, y + 0.5) */
static float4 centre(uint x, uint y) { return float4(float(x) + 0.5f, float(y) + 0.5f, 0.0f, 1.0f); }
extern "C" void run_vertices(float* out) { for (uint i = 0; i < 3; ++i) put(out + 4 * i, vs_fullscreen(i)); }
extern "C" void run_fill(float* out, uint W, uint H) {
  for (uint y = 0; y < H; ++y)
    for (uint x = 0; x < W; ++x) put(out + 4 * (y * W + x), fs_fill(centre(x, y)));
}
extern "C" void run_texture(float* out, uint W, uint H, const unsigned char* texels, int S, int linear) {
  texture2d<float> tex;
  tex.texels = texels;
  tex.size = S;
  sampler samp;
  samp.linear = linear != 0;
  const Frame frame{W, H, uint(S), 0u};
  for (uint y = 0; y < H; ++y)
    for (uint x = 0; x < W; ++x) put(out + 4 * (y * W + x), fs_texture(centre(x, y), frame, tex, samp));
}
"""

_HIERARCHY_DRIVER = r"""
#include <thread>
#include <vector>
/* hier_shared over whole threadgroups of BLOCK threads, one group at a time (its tile is static) */
kernel void run_shared(const uint4* in, uint4* out, long n, ulong lanes) {
  for (uint g = 0; g < lanes / BLOCK; ++g) {
    std::barrier<> bar(BLOCK);
    group_barrier = &bar;
    std::vector<std::thread> threads;
    for (uint t = 0; t < BLOCK; ++t) threads.emplace_back([=] { hier_shared(in, out, n, lanes, g, t); });
    for (auto& th : threads) th.join();
  }
}
"""

_CXX_FLAGS = [
    "-std=c++20",
    "-O1",
    "-fPIC",
    "-shared",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unknown-attributes",
    "-Wno-unused-parameter",
    "-ffp-contract=off",
    "-Xclang",
    "-ffloat16-excess-precision=none",
]


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
def host_kernels(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., ctypes.CDLL]:
    tmp = str(tmp_path_factory.mktemp("metal_host"))
    cxx = _host_cxx(tmp)
    if cxx is None:
        pytest.skip("no clang++ with _Float16 and C++20 <barrier>")
    with open(os.path.join(tmp, "metal_stdlib"), "w") as f:
        f.write(_STDLIB)
    cache: Dict[Tuple[str, int], ctypes.CDLL] = {}

    def build(stem: str, F: int = 0, constants: Optional[Dict[str, int]] = None, prefix: str = "") -> ctypes.CDLL:
        key = (stem, F) if constants is None else (f"{stem}_" + "_".join(f"{k}{v}" for k, v in constants.items()), F)
        key = (key[0] + "".join(c for c in prefix if c.isalnum()), key[1])
        if key not in cache:
            src = prefix + read_shader(f"{stem}.metal")
            if constants is None:
                src = src.replace("[[function_constant(0)]]", f"= {F}")
            for name, value in (constants or {}).items():  # every function constant, by name
                src = re.sub(rf"\b{name}\s*\[\[function_constant\(\d+\)\]\]", f"{name} = {value}", src)
            cpp = os.path.join(tmp, f"{key[0]}_{F}.cpp")
            driver = {
                "gemm": _GEMM_DRIVER,
                "graphics": _GRAPHICS_DRIVER,
                "occupancy": _OCCUPANCY_DRIVER,
                "hierarchy": _HIERARCHY_DRIVER,
            }.get(stem, "")
            with open(cpp, "w") as f:
                f.write(src + driver)
            so = cpp[:-4] + ".so"
            p = subprocess.run(
                [str(cxx), *_CXX_FLAGS, f"-I{tmp}", "-x", "c++", cpp, "-o", so, "-lpthread"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert p.returncode == 0, f"{stem}.metal does not compile as C++:\n{p.stderr[-4000:]}"
            cache[key] = ctypes.CDLL(so)
        return cache[key]

    return build


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


@pytest.mark.parametrize("F", [1, 7, 64])
def test_fma_metal_on_the_host_equals_the_reference(host_kernels: Callable[[str, int], ctypes.CDLL], F: int) -> None:
    lib = host_kernels("fma", F)
    entries = metal_kernels(read_shader("fma.metal"))
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
        arrs = [pattern("fp32", 0.5, 1.5, seed)[: 4 * n].astype(np.float32) for seed in (1, 2, 3)]
        a64, b64, c64 = (v.astype(np.float64) for v in arrs)
        # the reference in float64 rounded once: triad's b + q·c is one FMA per lane
        want = sk.ref(a64, b64, c64, q).astype(np.float32)
        fn = getattr(lib, f"stream_{sk.name}_f32")
        for i in range(n + 2):
            fn(
                *(_ptr(v) for v in arrs),
                ctypes.byref(ctypes.c_float(q)),
                ctypes.byref(ctypes.c_ulong(n)),
                ctypes.c_uint(i),
            )
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
    dispatch_null takes only the work-item count and writes nothing."""
    lib = host_kernels("dispatch", 0)
    x = np.zeros(4 * 260, np.float32)
    n = ctypes.c_ulong(256)
    for _ in range(3):
        for i in range(260):  # four threads past n: the guard
            lib.dispatch_tiny(_ptr(x), ctypes.byref(n), ctypes.c_uint(i))
    assert np.all(x[:1024] == 3.0) and np.all(x[1024:] == 0.0)
    lib.dispatch_null(ctypes.byref(ctypes.c_ulong(1)), ctypes.c_uint(0))


@pytest.mark.parametrize("F", [1, 5, 64])
def test_idiv_metal_on_the_host_equals_the_reference(host_kernels: Callable[..., ctypes.CDLL], F: int) -> None:
    """Every idiv kernel, its function constants F and DIVISOR set by name, equals the NumPy
    reference word for word (signed and unsigned, / and %, every divisor source)."""
    lib = host_kernels("idiv", 0, {"F": F, "DIVISOR": IDIV_DIVISOR})
    x = np.concatenate([np.array([0, 1, 255, 256, 2**31 - 1, 2**31, 2**32 - 1], np.uint32), idiv_input()[:250]])
    n = x.size
    count, d = ctypes.c_ulong(n), ctypes.c_long(IDIV_DIVISOR)
    for ik in IDIV_KERNELS:
        out = np.zeros(n + 2, np.uint32)
        fn = getattr(lib, ik.entry)
        for i in range(n + 2):  # two threads past n: the guard
            if ik.takes_divisor:
                fn(_ptr(x), _ptr(out), ctypes.byref(d), ctypes.byref(count), ctypes.c_uint(i))
            else:
                fn(_ptr(x), _ptr(out), ctypes.byref(count), ctypes.c_uint(i))
        assert np.array_equal(out[:n], ik.reference(x, F)), f"{ik.entry} at F={F} differs from the reference"
        assert not out[n:].any(), f"{ik.entry} wrote past n"


# ---- the guide's rules: access.metal, dualissue.metal, occupancy.metal -----------------------------


@pytest.mark.parametrize("stride", [1, 2, 8, 32])
def test_access_metal_on_the_host_equals_the_reference(host_kernels: Callable[..., ctypes.CDLL], stride: int) -> None:
    """Every width copies the strided elements exactly (every element once), and no thread past n
    writes."""
    lib = host_kernels("access")
    n = 256
    for ak in ACCESS_KERNELS:
        words = n * ak.width
        x = np.arange(words, dtype=np.uint32)
        out = np.full(words + 2 * ak.width, 0xFFFFFFFF, np.uint32)
        fn = getattr(lib, ak.entry)
        s, count = ctypes.c_long(stride), ctypes.c_ulong(n)
        for i in range(n + 2):
            fn(_ptr(x), _ptr(out), ctypes.byref(s), ctypes.byref(count), ctypes.c_uint(i))
        ok, msg = check_access(out[:words], n, ak.width, stride)
        assert ok, f"{ak.entry} stride {stride}: {msg}"
        assert np.all(out[words:] == 0xFFFFFFFF), f"{ak.entry} wrote past n"


@pytest.mark.parametrize("F", [2, 8, 64])
def test_dualissue_metal_on_the_host_meets_the_references(host_kernels: Callable[..., ctypes.CDLL], F: int) -> None:
    """Each kind's plane meets its reference (the FP chains within their tolerance, integers word
    for word), a mixed kernel's second kind in plane 1."""
    lib = host_kernels("dualissue", 0, {"F": F})
    x = dual_input()[: 8 * 40].astype(np.float32)
    n = x.size // CHAINS
    a, count = ctypes.c_float(-0.75), ctypes.c_ulong(n)
    for dk in DUAL_KERNELS:
        out = np.zeros(dk.words_out() * n + 8, np.uint32)
        fn = getattr(lib, dk.entry)
        for i in range(n + 1):
            fn(_ptr(x), _ptr(out), ctypes.byref(a), ctypes.byref(count), ctypes.c_uint(i))
        for p, kind in enumerate(dk.kinds):
            plane = out[p * 8 * n : (p + 1) * 8 * n]
            want = kind_reference(kind, x, F)
            if kind == "int32":
                assert np.array_equal(plane, want), f"{dk.entry} {kind} plane at F={F}"
            else:
                rtol, atol = kind_tolerance(kind)
                got = plane.view(np.float32).astype(np.float64)
                assert np.all(np.abs(got - want) <= atol + rtol * np.abs(want)), f"{dk.entry} {kind} plane at F={F}"
        assert not out[dk.words_out() * n :].any(), f"{dk.entry} wrote past n"


@pytest.mark.parametrize("tg_bytes", [0, 512, 1024])
def test_occupancy_metal_on_the_host_swaps_neighbours(host_kernels: Callable[..., ctypes.CDLL], tg_bytes: int) -> None:
    """out[i] = in[i ^ 1] through threadgroup memory of every size (threads of a group meet at the
    barrier), and directly without it."""
    group = 16
    lib = host_kernels("occupancy", prefix=occupancy_source("", tg_bytes, group))
    x = np.arange(4 * 64, dtype=np.float32)
    out = np.full_like(x, np.nan)
    lib.run_occupancy(_ptr(x), _ptr(out), ctypes.c_ulong(x.size // 4), ctypes.c_uint(group))
    assert np.array_equal(out, occupancy_reference(x))


# ---- hierarchy.metal: the working-set sweep's kernels and the threadgroup-memory kernel ----------------


def _hier_pattern() -> np.ndarray:
    return np.random.default_rng(5).integers(0, 1 << 32, 37, dtype=np.uint64).astype(np.uint32)


def _lane_sum(out: np.ndarray) -> np.ndarray:
    return (out.reshape(-1, 4).astype(np.uint64).sum(axis=0) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


@pytest.mark.parametrize("n,lanes,passes,rotate", [(96, 32, 3, 1), (100, 32, 3, 1), (40, 64, 5, 1), (96, 32, 2, 0)])
def test_hierarchy_read_metal_on_the_host_equals_the_reference(
    host_kernels: Callable[..., ctypes.CDLL], n: int, lanes: int, passes: int, rotate: int
) -> None:
    """hier_read, its function constants set by name, sums to the suite's NumPy reference over its
    lanes (every lane written: the poison would show), with lanes fewer and more than words."""
    lib = host_kernels("hierarchy", 0, {"PASSES": passes, "ROTATE": rotate, "BLOCK": 256})
    pat = _hier_pattern()
    words = np.resize(pat, 4 * n)
    out = np.full(4 * (lanes + 2), 0xA5A5A5A5, np.uint32)
    count, size = ctypes.c_ulong(lanes), ctypes.c_long(n)
    for t in range(lanes + 2):  # two threads past the lanes: the guard
        lib.hier_read(_ptr(words), _ptr(out), ctypes.byref(size), ctypes.byref(count), ctypes.c_uint(t))
    assert np.array_equal(_lane_sum(out[: 4 * lanes]), read_total(word_sums(pat), n, lanes, passes, bool(rotate)))
    assert np.all(out[4 * lanes :] == 0xA5A5A5A5), "a thread past the lanes wrote"


def test_hierarchy_rmw_metal_on_the_host_restores_its_buffer(host_kernels: Callable[..., ctypes.CDLL]) -> None:
    lib = host_kernels("hierarchy", 0, {"PASSES": 4, "ROTATE": 1, "BLOCK": 256})
    pat = _hier_pattern()
    n, lanes = 96, 32
    words = np.resize(pat, 4 * n)
    out = np.zeros(4 * lanes, np.uint32)
    for t in range(lanes):
        lib.hier_rmw(
            _ptr(words),
            _ptr(out),
            ctypes.byref(ctypes.c_long(n)),
            ctypes.byref(ctypes.c_ulong(lanes)),
            ctypes.c_uint(t),
        )
    assert np.array_equal(_lane_sum(out), rmw_total(word_sums(pat), word_sums(pat, MASK), n, 4))
    assert np.array_equal(words, np.resize(pat, 4 * n)), "an even number of passes leaves the buffer as it was"


def test_hierarchy_shared_metal_on_the_host_sums_every_tile(host_kernels: Callable[..., ctypes.CDLL]) -> None:
    """hier_shared over two threadgroups of 256 threads (the barrier emulated): every pass reads
    each threadgroup's whole tile once."""
    lib = host_kernels("hierarchy", 0, {"PASSES": 3, "ROTATE": 1, "BLOCK": 256})
    pat = _hier_pattern()
    groups = 2
    n, lanes = groups * TILE_WORDS, groups * 256
    words = np.resize(pat, 4 * n)
    out = np.full(4 * lanes, 0xA5A5A5A5, np.uint32)
    lib.run_shared(_ptr(words), _ptr(out), ctypes.c_long(n), ctypes.c_ulong(lanes))
    want = (word_sums(pat).upto(np.array([n]))[0] * np.uint64(3) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    assert np.array_equal(_lane_sum(out), want)


# ---- graphics.metal (render passes): fragment functions per pixel -----------------------------------

_GW, _GH = 40, 12


def _graphics(
    host_kernels: Callable[..., ctypes.CDLL], F: int = 0, fetches: int = 1, random: bool = False, bilinear: bool = False
) -> ctypes.CDLL:
    return host_kernels("graphics", 0, {"F": F, "FETCHES": fetches, "RANDOM": int(random), "BILINEAR": int(bilinear)})


def test_graphics_vertices_cover_the_viewport(host_kernels: Callable[..., ctypes.CDLL]) -> None:
    out = np.zeros((3, 4), np.float32)
    _graphics(host_kernels).run_vertices(_ptr(out))
    assert out.tolist() == [[-1, -1, 0, 1], [3, -1, 0, 1], [-1, 3, 0, 1]]


@pytest.mark.parametrize("F", [0, 1, 37])
def test_graphics_fs_fill_on_the_host_equals_the_reference(host_kernels: Callable[..., ctypes.CDLL], F: int) -> None:
    out = np.full((_GH, _GW, 4), np.nan, np.float32)
    _graphics(host_kernels, F=F).run_fill(_ptr(out), ctypes.c_uint(_GW), ctypes.c_uint(_GH))
    want = G.fill_reference(_GW, _GH, F, "rgba32float")
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32)), f"fs_fill at F={F} differs from fill_reference"


@pytest.mark.parametrize("pattern_", G.PATTERNS)
@pytest.mark.parametrize("filter_", G.FILTERS)
def test_graphics_fs_texture_on_the_host_meets_the_reference(
    host_kernels: Callable[..., ctypes.CDLL], pattern_: str, filter_: str
) -> None:
    tex = G.texture_noise(16)
    bilinear = filter_ == "bilinear"
    sums = G.texture_sums(tex, _GW, _GH, pattern_, filter_, (1, 3))
    for fetches in (1, 3):
        lib = _graphics(host_kernels, fetches=fetches, random=pattern_ == "random", bilinear=bilinear)
        out = np.full((_GH, _GW, 4), np.nan, np.float32)
        lib.run_texture(
            _ptr(out), ctypes.c_uint(_GW), ctypes.c_uint(_GH), _ptr(tex), ctypes.c_int(16), ctypes.c_int(int(bilinear))
        )
        ok, why = G.check_target(out, sums[fetches], "f32", fetches=fetches, bilinear=bilinear)
        assert ok, f"fs_texture {pattern_} {filter_} x{fetches}: {why}"
        if not bilinear:
            assert np.array_equal(out, sums[fetches]), "nearest sampling sums the texels exactly"
