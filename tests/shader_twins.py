"""Reading the twin kernel sources (shaders/cuda/*.cu and shaders/metal/*.metal, and the graphics
shaders shaders/metal/graphics.metal and shaders/wgsl/graphics.wgsl) for the tests: their entries,
arguments and function constants, parsed from the text. Shared by tests/unit (the static twin
checks) and tests/toolchain (nvcc, the MSL stand-in)."""

from __future__ import annotations

import os
import re
import shutil
from typing import Dict, Iterator, List, Set, Tuple

import numpy as np

from apple_roofline.shaders import shader_path

#: Kernel files that exist on both backends (shaders/cuda/<stem>.cu and shaders/metal/<stem>.metal).
TWIN_STEMS = ("stream", "fma", "gemm", "dispatch", "idiv")
#: Metal files whose twin is a WGSL file (render passes: the graphics study), not a CUDA one.
WGSL_TWINS: Dict[str, str] = {"graphics.metal": "graphics.wgsl"}
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


def read_shader(name: str) -> str:
    with open(shader_path(name), encoding="utf-8") as f:
        return f.read()


def strip_comments(src: str) -> str:
    """``src`` without comments (the shaders have no string literals containing comment markers)."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


def split_params(params: str) -> List[str]:
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
    return {m.group(1): split_params(m.group(2)) for m in pat.finditer(strip_comments(src))}


def metal_kernels(src: str) -> Dict[str, List[str]]:
    """``kernel void`` functions of a .metal file: name -> parameter declarations."""
    code = strip_comments(src)
    out: Dict[str, List[str]] = {}
    for m in re.finditer(r"\bkernel\s+void\s+(\w+)\s*\(", code):
        depth, j = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            j += 1
        assert m.group(1) not in out, f"kernel {m.group(1)} defined twice"
        out[m.group(1)] = split_params(code[m.end():j - 1])
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


def metal_stage_functions(src: str) -> Dict[str, str]:
    """``vertex`` and ``fragment`` functions of a .metal file: name -> stage."""
    pat = re.compile(r"\b(vertex|fragment)\s+[\w:<>]+\s+(\w+)\s*\(")
    return {m.group(2): m.group(1) for m in pat.finditer(strip_comments(src))}


def wgsl_stage_functions(src: str) -> Dict[str, str]:
    """``@vertex`` and ``@fragment`` functions of a .wgsl file: name -> stage."""
    pat = re.compile(r"@(vertex|fragment)\s+fn\s+(\w+)\s*\(")
    return {m.group(2): m.group(1) for m in pat.finditer(strip_comments(src))}


def wgsl_overrides(src: str) -> Dict[str, str]:
    """``override NAME: T`` declarations of a .wgsl file: name -> WGSL type."""
    pat = re.compile(r"\boverride\s+(\w+)\s*:\s*(\w+)")
    return {m.group(1): m.group(2) for m in pat.finditer(strip_comments(src))}


def function_constants(src: str) -> List[Tuple[str, str, int]]:
    """(type, name, index) of each ``constant T name [[function_constant(i)]];``."""
    pat = re.compile(r"\bconstant\s+(\w+)\s+(\w+)\s*\[\[\s*function_constant\(\s*(\d+)\s*\)\s*\]\]\s*;")
    return [(m.group(1), m.group(2), int(m.group(3))) for m in pat.finditer(strip_comments(src))]


def required_macros(cuda_src: str) -> Set[str]:
    """-D constants a .cu file refuses to compile without (``#ifndef X`` followed by ``#error``)."""
    return set(re.findall(r"#ifndef\s+(\w+)\s*\n\s*#error", cuda_src))


def twins() -> Iterator[Tuple[str, Dict[str, List[str]], Dict[str, List[str]]]]:
    for stem in TWIN_STEMS:
        yield stem, cuda_entries(read_shader(f"{stem}.cu")), metal_kernels(read_shader(f"{stem}.metal"))


def metal_files() -> List[str]:
    folder = os.path.dirname(shader_path("fma.metal"))
    return sorted(f for f in os.listdir(folder) if f.endswith(".metal"))


def metal_compute_files() -> List[str]:
    """The .metal files with CUDA twins (every one but the render-pass shaders of WGSL_TWINS)."""
    return [f for f in metal_files() if f not in WGSL_TWINS]


# ---- (a) twins --------------------------------------------------------------------------------------


# ---- the tiled GEMM (gemm_tiled16_f32) ------------------------------------------------------------

TILE = 16
GROUP = 256


def tiled16_element(g: int, t: int, N: int) -> Tuple[int, int]:
    """(row, col) of C computed by thread t of threadgroup (block) g, as gemm_tiled16_f32 maps them."""
    tiles = N // TILE
    ty, tx = t // TILE, t % TILE
    return (g // tiles) * TILE + ty, (g % tiles) * TILE + tx


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
