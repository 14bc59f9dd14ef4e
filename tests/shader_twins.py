"""Reading the twin kernel sources (shaders/cuda/*.cu and shaders/metal/*.metal, and the graphics
shaders shaders/metal/graphics.metal and shaders/wgsl/graphics.wgsl) for the tests: their entries,
arguments and function constants, parsed from the text. Shared by tests/unit (the static twin
checks) and tests/toolchain (nvcc, the MSL stand-in)."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Set, Tuple

import numpy as np

from apple_roofline.shaders import shader_path

#: Kernel files that exist on both backends (shaders/cuda/<stem>.cu and shaders/metal/<stem>.metal).
TWIN_STEMS = ("stream", "fma", "gemm", "dispatch", "idiv", "matrix", "access", "dualissue", "occupancy", "hierarchy")
#: Macros a suite prepends to a twin pair's source (a threadgroup array's size), so the Metal file
#: declares them as macros, not function constants: stem -> names.
PREPENDED_MACROS: Dict[str, Set[str]] = {"occupancy": {"AR_TG_FLOAT4S", "AR_TG_SPREAD"}}
#: Metal files whose twin is a WGSL file (render passes: the graphics study), not a CUDA one.
WGSL_TWINS: Dict[str, str] = {"graphics.metal": "graphics.wgsl"}
#: CUDA entries without a Metal twin, and why.
NO_METAL_TWIN: Dict[str, str] = {
    "scalar_indep8_f64": "Apple GPUs have no FP64 and MSL has no double",
    "dispatch_null_stamp": "MSL has no clock a kernel can read: Metal's start is the command buffer's GPUStartTime",
    "dispatch_tiny_stamp": "MSL has no clock a kernel can read: Metal's start is the command buffer's GPUStartTime",
    "matrix_s8_s32": "MSL has no integer simdgroup_matrix (matrix_mpp.metal's mpp_s8_s32 is its twin)",
    "matrix_bf16_f32": "simdgroup_bfloat8x8 needs MSL 3.1 (matrix_mpp.metal's mpp_bf16_f32 is its twin)",
}
#: Metal files whose kernels are twins of a CUDA file's under another prefix: file -> (CUDA file,
#: CUDA prefix, Metal prefix).
PREFIXED_TWINS: Dict[str, Tuple[str, str, str]] = {"matrix_mpp.metal": ("matrix.cu", "matrix_", "mpp_")}
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
        out[m.group(1)] = split_params(code[m.end() : j - 1])
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
            assert a is not None and a.group(1) in POSITION_ATTRIBUTES, (
                f"parameter '{param}' is neither a buffer nor a uint thread position"
            )
            continue
        decl, index = m.group(1), int(m.group(2))
        if re.fullmatch(r"(const device|device const) [\w]+ ?\* ?\w+", decl):
            kind = "const-ptr"
        elif re.fullmatch(r"device [\w]+ ?\* ?\w+", decl):
            kind = "ptr"
        else:
            scalars = {"float": "float", "long": "int", "ulong": "count"}
            s = re.fullmatch(r"constant (\w+) ?& ?\w+", decl)
            assert s is not None and s.group(1) in scalars, (
                f"Metal parameter '{param}' is none of the backend's argument kinds"
            )
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
    """The .metal files with CUDA twins of the same stem (every one but the render-pass shaders of
    WGSL_TWINS and the prefixed twins of PREFIXED_TWINS)."""
    return [f for f in metal_files() if f not in WGSL_TWINS and f not in PREFIXED_TWINS]


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


# ---- the matrix suite's mma.sync fragments (shaders/cuda/matrix.cu) ---------------------------------

#: Elements per 32-bit register, by PTX input type.
MMA_EPR = {"f16": 2, "bf16": 2, "s8": 4}


def mma_a_index(lane: int, r: int, e: int, epr: int) -> Tuple[int, int]:
    """(row, column) within the 16 x FK fragment that matrix.cu loads into A register r, element e
    (its ar_a_row / ar_a_col)."""
    return (lane >> 2) + 8 * (r & 1), (lane & 3) * epr + e + 4 * epr * (r >> 1)


def mma_b_index(lane: int, r: int, e: int, epr: int) -> Tuple[int, int]:
    """(k, n) within the FK x 8 fragment of B register r, element e (ar_b_row / ar_b_col)."""
    return (lane & 3) * epr + e + 4 * epr * r, lane >> 2


def mma_c_index(lane: int, i: int) -> Tuple[int, int]:
    """(row, column) within the 16 x 8 accumulator of element i (ar_c_row / ar_c_col)."""
    return (lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)


def ptx_a(lane: int, i: int, ptype: str, fk: int) -> Tuple[int, int]:
    """The PTX ISA's table for element a_i of mma.m16n8k{fk} (".f16/.bf16" or ".s8"), as the ISA
    states it ("Matrix Fragments for mma.m16n8k8 / m16n8k16 / m16n8k32"), element by element."""
    g, t = lane >> 2, lane % 4
    if ptype in ("f16", "bf16"):
        if fk == 8:  # a0..a3
            return (g if i < 2 else g + 8), t * 2 + (i & 1)
        row = g if i in (0, 1, 4, 5) else g + 8  # a0..a7
        return row, t * 2 + (i & 1) + (8 if i >= 4 else 0)
    if fk == 16:  # s8 a0..a7
        return (g if i < 4 else g + 8), t * 4 + (i & 3)
    row = g if (i < 4 or 8 <= i < 12) else g + 8  # s8 a0..a15
    return row, t * 4 + (i & 3) + (16 if i >= 8 else 0)


def ptx_b(lane: int, i: int, ptype: str, fk: int) -> Tuple[int, int]:
    """The PTX ISA's table for element b_i: (row k, column n)."""
    g, t = lane >> 2, lane % 4
    if ptype in ("f16", "bf16"):
        return (t * 2 + i if fk == 8 else t * 2 + (i & 1) + (8 if i >= 2 else 0)), g
    return (t * 4 + i if fk == 16 else t * 4 + (i & 3) + (16 if i >= 4 else 0)), g


def ptx_c(lane: int, i: int) -> Tuple[int, int]:
    """The PTX ISA's table for accumulator element c_i (.f32, .s32, and .f16 two per register)."""
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


@dataclass(frozen=True)
class MmaLayout:
    """One mma.sync fragment's register layout: the input type (``ptype``), K of one fragment
    (``fk``), elements per 32-bit register (``epr``), and A and B registers per lane."""

    ptype: str
    fk: int
    epr: int

    @property
    def areg(self) -> int:
        return self.fk // (4 * self.epr) * 2

    @property
    def breg(self) -> int:
        return self.fk // (4 * self.epr)


def lane_registers_a(a: np.ndarray, lay: MmaLayout, a_index: Callable[..., Tuple[int, int]]) -> Dict[tuple, int]:
    """Per (lane, mf, kf, i): element a_i (i = r * epr + e) of A fragment (mf, kf) as the kernel
    loads it into the lane's registers with ``a_index``."""
    M, K = a.shape
    epr, fk = lay.epr, lay.fk
    return {
        (lane, mf, kf, r * epr + e): a[mf * 16 + a_index(lane, r, e, epr)[0], kf * fk + a_index(lane, r, e, epr)[1]]
        for lane in range(32)
        for mf in range(M // 16)
        for kf in range(K // fk)
        for r in range(lay.areg)
        for e in range(epr)
    }


def lane_registers_b(b: np.ndarray, lay: MmaLayout, b_index: Callable[..., Tuple[int, int]]) -> Dict[tuple, int]:
    """Per (lane, kf, nf, i): element b_i of B fragment (kf, nf) as the kernel loads it with ``b_index``."""
    K, N = b.shape
    epr, fk = lay.epr, lay.fk
    return {
        (lane, kf, nf, r * epr + e): b[kf * fk + b_index(lane, r, e, epr)[0], nf * 8 + b_index(lane, r, e, epr)[1]]
        for lane in range(32)
        for kf in range(K // fk)
        for nf in range(N // 8)
        for r in range(lay.breg)
        for e in range(epr)
    }


def assemble_fragments(
    lay: MmaLayout, regs_a: Dict[tuple, int], regs_b: Dict[tuple, int], mf: int, kf: int, nf: int
) -> Tuple[np.ndarray, np.ndarray]:
    """The "tensor core"'s A (16 x fk) and B (fk x 8) fragments of tile (mf, kf, nf), assembled from
    the lanes' registers by the PTX ISA's tables (ptx_a, ptx_b). Raises AssertionError where the
    registers leave an element of either unfilled."""
    fa = np.full((16, lay.fk), np.iinfo(np.int64).min, np.int64)
    fb = np.full((lay.fk, 8), np.iinfo(np.int64).min, np.int64)
    for lane in range(32):
        for i in range(lay.areg * lay.epr):
            fa[ptx_a(lane, i, lay.ptype, lay.fk)] = regs_a[(lane, mf, kf, i)]
        for i in range(lay.breg * lay.epr):
            fb[ptx_b(lane, i, lay.ptype, lay.fk)] = regs_b[(lane, kf, nf, i)]
    assert (fa != np.iinfo(np.int64).min).all() and (fb != np.iinfo(np.int64).min).all(), (
        "the lanes' registers do not cover the fragment"
    )
    return fa, fb


def store_mma_tile(acc: np.ndarray, M: int, N: int, c_index: Callable[[int, int], Tuple[int, int]]) -> np.ndarray:
    """C (M x N) as the lanes store their accumulators ``acc`` (per mf, nf, lane: c0..c3) with the
    kernel's ``c_index``."""
    c = np.full((M, N), np.iinfo(np.int64).min, np.int64)
    for mf in range(M // 16):
        for nf in range(N // 8):
            for lane in range(32):
                for i in range(4):
                    r, col = c_index(lane, i)
                    c[mf * 16 + r, nf * 8 + col] = acc[mf, nf, lane, i]
    return c


def emulate_mma_tile(
    a: np.ndarray,
    b: np.ndarray,
    ptype: str,
    fk: int,
    chain: int = 1,
    a_index=mma_a_index,
    b_index=mma_b_index,
    c_index=mma_c_index,
) -> np.ndarray:
    """One warp of matrix.cu in NumPy: every lane loads its A and B registers with the kernel's
    indices (``a_index``...), the "tensor core" assembles each fragment from the lanes' registers by
    the PTX ISA's tables (ptx_a, ptx_b, ptx_c), multiplies, and the lanes store C with the kernel's
    indices. Returns C (M x N) after ``chain`` multiply-accumulates of the tile (int64)."""
    M, K = a.shape
    N = b.shape[1]
    lay = MmaLayout(ptype, fk, MMA_EPR[ptype])
    regs_a, regs_b = lane_registers_a(a, lay, a_index), lane_registers_b(b, lay, b_index)
    acc = np.zeros((M // 16, N // 8, 32, 4), np.int64)  # per lane, c0..c3
    for _ in range(chain):
        for kf in range(K // fk):
            for mf in range(M // 16):
                for nf in range(N // 8):
                    fa, fb = assemble_fragments(lay, regs_a, regs_b, mf, kf, nf)
                    d = fa @ fb
                    for lane in range(32):
                        for i in range(4):
                            acc[mf, nf, lane, i] += d[ptx_c(lane, i)]
    return store_mma_tile(acc, M, N, c_index)


# ---- the matrix suite's wgmma path (shaders/cuda/wgmma.cu) ---------------------------------------------
# The kernel's side (wg_offset, wg_desc, wg_c_row / wg_c_col) and, separately, the hardware's side as
# the PTX ISA defines it ("Matrix Descriptor Format", the canonical no-swizzle K-major layout, the
# wgmma D fragment), so that a kernel whose layout, descriptor or store disagrees with the ISA
# computes a wrong product in the emulation below.

#: Bytes of K one wgmma reads (k16 of 16-bit inputs, k32 of s8, e4m3, e5m2): two core matrices of 16 bytes.
WG_STEP_BYTES = 32


def wg_offset(row: int, kb: int, kbytes: int) -> int:
    """wgmma.cu's wg_offset: byte of element (row, byte kb of the row) of a tile with ``kbytes``
    bytes per row (core matrices of 8 rows x 16 bytes, LBO = 128 along K, SBO = 8 kbytes along rows)."""
    return (row >> 3) * (kbytes * 8) + (kb >> 4) * 128 + (row & 7) * 16 + (kb & 15)


def wg_desc(addr: int, lbo: int, sbo: int) -> int:
    """wgmma.cu's wg_desc: the 64-bit matrix descriptor (no swizzle, base offset 0)."""
    return ((addr & 0x3FFFF) >> 4) | (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32)


def wg_c_index(w: int, t: int, i: int) -> Tuple[int, int]:
    """wgmma.cu's wg_c_row / wg_c_col: (row, column) of the 64 x N tile that accumulator element i of
    lane t in warp w holds."""
    return 16 * w + (t >> 2) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (t & 3) + (i & 1)


def ptx_desc_fields(desc: int) -> Dict[str, int]:
    """The fields of a matrix descriptor as the PTX ISA's "Matrix Descriptor Format" table lays them
    out: start address (bits 0-13), leading dimension byte offset (16-29), stride dimension byte
    offset (32-45), each encoded >> 4, base offset (49-51), swizzle mode (62-63)."""
    return {
        "start": (desc & 0x3FFF) << 4,
        "lbo": ((desc >> 16) & 0x3FFF) << 4,
        "sbo": ((desc >> 32) & 0x3FFF) << 4,
        "base": (desc >> 49) & 0x7,
        "swizzle": (desc >> 62) & 0x3,
    }


def ptx_read_operand(smem: np.ndarray, desc: int, rows: int, itemsize: int) -> np.ndarray:
    """What a wgmma reads through ``desc`` (no swizzle, K-major): a rows x (32 / itemsize) operand,
    element (r, k) at byte start + (r / 8) SBO + (kb / 16) LBO + (r % 8) 16 + kb % 16, kb = k
    itemsize: the PTX ISA's canonical layout, in which the leading dimension byte offset steps
    between core matrices adjacent in K and the stride dimension byte offset between those adjacent
    in M or N. ``smem`` holds one element per ``itemsize`` bytes (index = byte / itemsize); a byte
    outside it reads as a sentinel no product can match."""
    f = ptx_desc_fields(desc)
    assert f["swizzle"] == 0 and f["base"] == 0
    out = np.empty((rows, WG_STEP_BYTES // itemsize), np.int64)
    for r in range(rows):
        for k in range(WG_STEP_BYTES // itemsize):
            kb = k * itemsize
            byte = f["start"] + (r // 8) * f["sbo"] + (kb // 16) * f["lbo"] + (r % 8) * 16 + kb % 16
            out[r, k] = smem[byte // itemsize] if byte // itemsize < smem.size else 1 << 40
    return out


def ptx_wgmma_d(w: int, t: int, i: int) -> Tuple[int, int]:
    """The PTX ISA's wgmma D fragment (.m64nNk16 / .m64nNk32, .f32 / .s32, and .f16 two per
    register), as it states it: warp w of the warpgroup holds rows 16 w to 16 w + 15; with groupID =
    t / 4 and threadID_in_group = t % 4, d_i is at row 16 w + groupID for i % 4 < 2 and + 8 for the
    others, column (i / 4) * 8 + threadID_in_group * 2 + i % 2."""
    group, tig = t // 4, t % 4
    return 16 * w + group + (0 if i % 4 < 2 else 8), (i // 4) * 8 + tig * 2 + i % 2


def emulate_wgmma_tile(
    a: np.ndarray,
    b: np.ndarray,
    itemsize: int,
    chain: int = 1,
    swap_lbo_sbo: bool = False,
    offset=wg_offset,
    c_index=wg_c_index,
    decode=None,
) -> np.ndarray:
    """One warpgroup of wgmma.cu in NumPy: the block stores A (M x K) and B transposed (N x K) in
    shared memory with the kernel's ``offset``, builds the descriptors of each k step as the kernel
    does (LBO = 128, SBO = 8 KB; swapped with ``swap_lbo_sbo``), the "tensor core" reads the operands
    through them by the PTX ISA (:func:`ptx_read_operand`) and accumulates ``chain`` times, and the
    lanes store D with the kernel's ``c_index`` from the registers the ISA fills
    (:func:`ptx_wgmma_d`). Returns D (M x N, int64). With ``decode`` (FP8: A and B are byte codes),
    the tensor core decodes each operand it reads (``decode(codes)`` -> values; a byte read from
    outside the tiles is NaN) and D is float64."""
    M, K = a.shape
    N = b.shape[1]
    kbytes = K * itemsize
    a_base, b_base = 0, M * kbytes  # the two tiles, one after the other
    smem = wg_shared_memory(a, b, itemsize, offset)
    lbo, sbo = (8 * kbytes, 128) if swap_lbo_sbo else (128, 8 * kbytes)

    def operand(desc: int, rows: int) -> np.ndarray:
        x = ptx_read_operand(smem, desc, rows, itemsize)
        return x if decode is None else np.where(x >= 1 << 40, np.nan, decode(x & 0xFF))

    d = np.zeros((M, N), np.int64 if decode is None else np.float64)
    for _ in range(chain):
        for s in range(kbytes // WG_STEP_BYTES):
            da, db = (wg_desc(base + WG_STEP_BYTES * 8 * s, lbo, sbo) for base in (a_base, b_base))
            d += operand(da, M) @ operand(db, N).T
    return store_wgmma_tile(d, c_index)


def wg_shared_memory(a: np.ndarray, b: np.ndarray, itemsize: int, offset: Callable[[int, int, int], int]) -> np.ndarray:
    """The block's shared memory, one element per ``itemsize`` bytes: A (M x K) at byte 0 and B
    transposed (N x K) after it, each laid out with the kernel's ``offset``."""
    M, K = a.shape
    N = b.shape[1]
    kbytes = K * itemsize
    a_base, b_base = 0, M * kbytes
    smem = np.full((M + N) * kbytes // itemsize, 0, np.int64)
    for r in range(M):
        for k in range(K):
            smem[(a_base + offset(r, k * itemsize, kbytes)) // itemsize] = a[r, k]
    for n in range(N):
        for k in range(K):
            smem[(b_base + offset(n, k * itemsize, kbytes)) // itemsize] = b[k, n]
    return smem


def store_wgmma_tile(d: np.ndarray, c_index: Callable[[int, int, int], Tuple[int, int]]) -> np.ndarray:
    """D (M x N) as the four warps' lanes store the registers the ISA fills (:func:`ptx_wgmma_d`)
    with the kernel's ``c_index``."""
    M, N = d.shape
    out = np.full((M, N), np.iinfo(np.int64).min, d.dtype)
    for w in range(4):
        for t in range(32):
            for i in range(N // 2):
                out[c_index(w, t, i)] = d[ptx_wgmma_d(w, t, i)]
    return out
