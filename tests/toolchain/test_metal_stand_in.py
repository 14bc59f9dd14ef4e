"""The .metal kernels compiled as C++ against a minimal stand-in for <metal_stdlib> and run on the host:
every kernel's output equals the NumPy reference bit for bit. That proves their logic and C++ syntax,
not that Apple's compiler accepts them (address spaces, attributes and pragmas are mapped to
nothing). Needs a clang++ with _Float16 and C++20 <barrier>; skips without one.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import Callable, Dict, Optional, Tuple

import numpy as np
import pytest

from apple_roofline.suites.base import pattern
from apple_roofline.suites.fma import CHAIN_A, FMA_KERNELS
from apple_roofline.suites.gemm import check_gemm
from apple_roofline.suites.stream import Q, STREAM_KERNELS

from shader_twins import emulate_tiled16, metal_kernels, read_shader  # noqa: E402


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
            src = read_shader(f"{stem}.metal").replace("[[function_constant(0)]]", f"= {F}")
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
