"""The tile products of the ``matrix`` suite: precisions, tile shapes, how each backend's matrix
instruction composes a tile, counting, inputs and the NumPy reference (docs/design/matrix.md, "Matrix units").

Methodology: the A19/M5 Neural Accelerator article (OPS = repetitions × 2·M·N·K / time over a sweep
of tile shapes M, N ∈ {8, 16, 32}, K ∈ {8, 16, 32, 64, 128}, each output checked). One **work group**
— a warp on CUDA, a simdgroup on Metal, 32 threads — loads its A (M×K) and B (K×N) tile once from a
small cache-resident buffer into registers, then runs a dependent chain of ``ITERS × REPS``
multiply-accumulates ``C += A·B`` of the whole tile into its accumulator, and writes C (M×N) to its
own slot of the output. On Hopper (sm_90a) the ``wgmma`` API does the same with a **warpgroup** (4
warps, 128 threads) as the work group, over its own shapes (:data:`WGMMA_SHAPES`: M = 64, N ∈ {64,
128, 256}, K ∈ {32, 64}): A and B are read by the tensor cores from shared memory, where each block
loads them once, through matrix descriptors (the layout is documented in shaders/cuda/wgmma.cu and
modelled in tests/unit/test_matrix.py). Every work group computes the same product, so

    C = ITERS · REPS · (A · B)        (in the accumulator's type)

The chain cannot be folded or hoisted: every step reads the accumulator the previous one wrote
(``mma.sync`` and ``wgmma.mma_async`` are inline PTX with read-write accumulator operands, wgmma with
scale-d = 1; ``simdgroup_multiply_accumulate`` and ``matmul2d`` in multiply-accumulate mode take it as
an operand).

Inputs are small integers, so every partial sum is an integer that the accumulator holds exactly,
whatever order the hardware adds in, and the check is exact equality:

- FP16→FP32, BF16→FP32: entries in {-3 … 3}; |C| ≤ ITERS·REPS·9·K = 1 179 648 < 2^24 (K ≤ 128).
- INT8→INT32: entries in {-8 … 7}; |C| ≤ ITERS·REPS·64·K ≈ 8.4e6 < 2^31.
- FP16→FP16 ("cancelling" inputs): A = [P P] and B = [Q; −Q] + E, P, Q in {-1, 0, 1}, E with one
  ±1 per column, so A·B = A·E has entries in {-1, 0, 1}: |C| ≤ ITERS·REPS = 1024 and a partial sum
  never exceeds 1024 + 2·K ≤ 1280 < 2048, below which FP16 holds every integer.
- FP8 (E4M3, E5M2)→FP32: the same cancelling inputs (entries in {-2 … 2}, exact in both formats,
  written as their byte codes by :mod:`.fp8`'s NumPy model). Not the wider {-3 … 3} of the other
  FP32 accumulators: Hopper's FP8 tensor cores add with a narrower internal precision than FP32
  (about 14 bits retained, DeepSeek-V3 Technical Report, arXiv:2412.19437, section 3.3.2), so partial
  sums stay below 2^11, where that still holds every integer. A and B are dense,
  so every product of the hardware is real work; a fragment that reads B a row off breaks the
  cancellation and shows as wrong elements (swapping A's two equal halves would not: the mma
  fragment layout is checked on its own, by tests/unit/test_matrix.py's model of matrix.cu).

Counting (the int8 GEMM's convention, docs/design/measurement.md, "Counting FLOPs and bytes"): OPS per work
group = ITERS · REPS · 2·M·N·K (integer operations for INT8, in the ``flops`` field); bytes =
compulsory traffic: A and B read once, every work group's C written once.

Tile composition, by backend (:func:`compose`): CUDA ``mma.sync.aligned`` fragments m16n8k16 (f16,
bf16; m16n8k8 where K = 8) and m16n8k32 (s8; m16n8k16 where K = 16); CUDA ``wgmma.mma_async`` (sm_90a)
m64nNk16 (f16, bf16) and m64nNk32 (s8, e4m3, e5m2), N the tile's whole N; Metal ``simdgroup_matrix`` 8×8×8 (FP16
inputs only); Metal Performance Primitives ``matmul2d`` takes the whole tile. A shape an instruction
cannot compose is a skip with the reason, never dropped.

Ceiling names say the instruction that set them (:meth:`MatrixApi.ceiling_class`): "Matrix FP16→FP32
(wgmma)", "Matrix FP16→FP32 (mma.sync)", "Matrix FP16→FP32 (simdgroup_matrix)", "Matrix INT8→INT32
(matmul2d)"; :func:`parse_matrix_class` reads one back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..base import ITEMSIZE, KernelDef, tiled_within
from ..fp8 import FORMATS as FP8_FORMATS
from ..fp8 import decode as fp8_decode
from ..fp8 import encode as fp8_encode

__all__ = [
    "gemm_class_of",
    "pipe_class",
    "REPS",
    "ITERS",
    "GROUP_THREADS",
    "M_SIZES",
    "N_SIZES",
    "K_SIZES",
    "TILE_SHAPES",
    "WARPGROUP_THREADS",
    "WGMMA_SHAPES",
    "WGMMA_N",
    "WGMMA_CONSTANTS",
    "MatrixPrecision",
    "PRECISIONS",
    "PRECISION_BY_DTYPE",
    "MatrixApi",
    "APIS",
    "API_BY_NAME",
    "Composition",
    "compose",
    "matrix_class",
    "parse_matrix_class",
    "ops_per_group",
    "bytes_per_launch",
    "matrix_inputs",
    "matrix_reference",
    "to_storage",
    "from_storage",
    "check_tile_output",
    "check_shape",
    "kernel_def",
    "MPP_MIN_FAMILY",
    "FP8",
    "largest_shape",
    "MAX_ACC_PER_THREAD",
]

#: Multiply-accumulates of the tile per repetition block (the article's 64).
REPS = 64
#: Repetition blocks per work group: the chain is ITERS × REPS = 1024 steps long.
ITERS = 16
#: Threads of one work group (a warp, a simdgroup).
GROUP_THREADS = 32
M_SIZES: Tuple[int, ...] = (8, 16, 32)
N_SIZES: Tuple[int, ...] = (8, 16, 32)
K_SIZES: Tuple[int, ...] = (8, 16, 32, 64, 128)
#: Every (M, N, K) of the sweep, in measurement order.
TILE_SHAPES: Tuple[Tuple[int, int, int], ...] = tuple((m, n, k) for m in M_SIZES for n in N_SIZES for k in K_SIZES)
#: Threads of a warpgroup, wgmma's work group (4 consecutive warps, the first at a warp index
#: divisible by 4).
WARPGROUP_THREADS = 128
#: The N of the wgmma instructions shaders/cuda/wgmma.cu builds (m64nNk16, m64nNk32).
WGMMA_N: Tuple[int, ...] = (64, 128, 256)
#: wgmma's sweep, in measurement order: M = 64 (the instruction's), N = the instruction's N, K a
#: chain of 2 or 4 k16 steps (1 or 2 k32 steps for INT8), K ≤ 64 so that A and B fit 40 KiB of
#: static shared memory.
WGMMA_SHAPES: Tuple[Tuple[int, int, int], ...] = tuple((64, n, k) for n in WGMMA_N for k in (32, 64))
#: wgmma.cu's compile constants besides the tile (see its header): the backend's request for the
#: arch-specific target sm_90a, repetition blocks per commit group (4: NVRTC took 2-3 s a kernel on
#: an H100 host, 7 s at 16 and 35 s at 64, which gained 1-2 %), commit groups left in flight while the
#: next is issued (1: 1.02x of waiting for each on an H100; bench/README.md, "Matrix units through wgmma").
WGMMA_CONSTANTS: Mapping[str, int] = {"AR_ARCH_SPECIFIC": 1, "WG_BATCH": 4, "WG_INFLIGHT": 1}
#: The most accumulator elements per thread of a default run's tile (:func:`largest_shape`): a quarter
#: of the 255 registers a thread may hold, at one FP32 or INT32 element per register.
MAX_ACC_PER_THREAD = 64
#: The lowest Apple GPU family whose matmul2d runs on the Neural Accelerators: Apple10 (M5, A19).
MPP_MIN_FAMILY = 1010


@dataclass(frozen=True)
class MatrixPrecision:
    """An input/accumulator pair: ``dtype`` (the measurement's, e.g. ``"fp16→fp32"``), the input and
    accumulator storage dtypes (:data:`~.base.ITEMSIZE` keys), the entry suffix shared by every
    backend (``"f16_f32"``), the ceiling class and the GEMM dtype it stands beside."""

    input: str
    acc: str
    suffix: str
    gemm: str

    @property
    def dtype(self) -> str:
        """``"fp16→fp32"``."""
        return f"{self.input}→{self.acc}"

    @property
    def label(self) -> str:
        """``"FP16→FP32"``."""
        return self.dtype.upper()

    @property
    def ceiling_class(self) -> str:
        """``"Matrix FP16→FP32"``: the stem of the ceiling names of this precision (each API's ceiling
        adds its instruction: :meth:`MatrixApi.ceiling_class`)."""
        return f"Matrix {self.label}"


PRECISIONS: Tuple[MatrixPrecision, ...] = (
    MatrixPrecision("fp16", "fp32", "f16_f32", "fp16"),
    MatrixPrecision("fp16", "fp16", "f16_f16", "fp16"),
    MatrixPrecision("int8", "int32", "s8_s32", "int8"),
    MatrixPrecision("bf16", "fp32", "bf16_f32", "bf16"),
    MatrixPrecision("e4m3", "fp32", "e4m3_f32", "fp8"),
    MatrixPrecision("e5m2", "fp32", "e5m2_f32", "fp8"),
)
#: The FP8 input formats (byte codes, :mod:`.fp8`).
FP8: Tuple[str, ...] = tuple(FP8_FORMATS)
PRECISION_BY_DTYPE: Dict[str, MatrixPrecision] = {p.dtype: p for p in PRECISIONS}


@dataclass(frozen=True)
class Composition:
    """How a backend's instruction builds one tile: the native fragment ``(fm, fn, fk)`` and its
    name, or ``reason`` (non-empty) why it cannot."""

    fragment: Tuple[int, int, int] = (0, 0, 0)
    instruction: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason

    def counts(self, m: int, n: int, k: int) -> Tuple[int, int, int]:
        """Fragments along M, N and K."""
        fm, fn, fk = self.fragment
        return m // fm, n // fn, k // fk


@dataclass(frozen=True)
class MatrixApi:
    """One backend's way to the matrix hardware: ``name`` (the kernel-name prefix), ``backend``,
    ``source`` (shader file), ``entry_prefix``, ``scope`` (the execution scope recorded as a
    parameter), per precision suffix either fragments ``(fm, fn, fk, instruction)`` or the reason the
    API lacks the precision, and ``instruction``, the name its ceilings carry.

    ``whole_tile``: the instruction takes the whole tile (matmul2d). ``whole_n``: the instruction's N
    is the tile's, one of these (wgmma; fragments then give fn = 0 and an instruction name with
    ``{n}`` for it). ``shapes``: the tile shapes measured, in order; ``max_dim``: the largest M, N or
    K a shape may have; ``group_threads``: threads of one work group (32: a warp or a simdgroup;
    128: a warpgroup); ``block``: threads per block / threadgroup; ``groups``: work groups per
    launch, and with ``--quick``, before rounding to whole waves; ``constants``: compile constants
    besides the tile."""

    name: str
    backend: str
    source: str
    entry_prefix: str
    scope: str
    fragments: Mapping[str, Tuple[Tuple[int, int, int, str], ...]]
    missing: Mapping[str, str]
    instruction: str
    whole_tile: bool = False
    whole_n: Tuple[int, ...] = ()
    shapes: Tuple[Tuple[int, int, int], ...] = TILE_SHAPES
    max_dim: int = 128
    group_threads: int = GROUP_THREADS
    block: int = 128
    groups: Tuple[int, int] = (4096, 1024)
    constants: Mapping[str, int] = field(default_factory=dict)

    def entry(self, p: MatrixPrecision) -> str:
        return f"{self.entry_prefix}_{p.suffix}"

    def ceiling_class(self, p: MatrixPrecision) -> str:
        """``"Matrix FP16→FP32 (wgmma)"``: the compute ceiling the best valid shape of ``p`` sets
        through this API (:func:`matrix_class`)."""
        return matrix_class(p.dtype, self.instruction)


def matrix_class(dtype: str, instruction: str) -> str:
    """The ceiling name of a matrix precision through an instruction: ``("fp16→fp32", "wgmma")`` ->
    ``"Matrix FP16→FP32 (wgmma)"``."""
    return f"Matrix {dtype.upper()} ({instruction})"


_CLASS = re.compile(r"^Matrix (\S+→\S+) \((.+)\)$")


def parse_matrix_class(name: str) -> Optional[Tuple[str, str]]:
    """``(dtype, instruction)`` of a ceiling name of :func:`matrix_class` (``"Matrix FP16→FP32
    (wgmma)"`` -> ``("fp16→fp32", "wgmma")``); for a name without an instruction (runs before the
    instruction was named) the instruction is ""; None for a name that is not a matrix class."""
    m = _CLASS.match(name)
    if m:
        return m.group(1).lower(), m.group(2)
    if name.startswith("Matrix ") and "→" in name and " " not in name[len("Matrix ") :]:
        return name[len("Matrix ") :].lower(), ""
    return None


_MMA_F16 = ((16, 8, 16, "mma.sync.aligned.m16n8k16"), (16, 8, 8, "mma.sync.aligned.m16n8k8"))
_NO_FP8_MMA = (
    "matrix.cu builds no FP8 mma.sync (m16n8k32 .e4m3/.e5m2 needs sm_89 or newer); on Hopper the FP8 ceiling is wgmma's"
)
_NO_FP8_METAL = "MSL has no 8-bit floating-point type"
_MMA_S8 = ((16, 8, 32, "mma.sync.aligned.m16n8k32"), (16, 8, 16, "mma.sync.aligned.m16n8k16"))
_SG = ((8, 8, 8, "simdgroup_multiply_accumulate 8x8x8"),)
_WG = "wgmma.mma_async.sync.aligned.m64n{n}"

#: The APIs, in measurement order per backend (wgmma before mma.sync: a suite cut short by its time
#: budget keeps the Hopper ceiling).
APIS: Tuple[MatrixApi, ...] = (
    MatrixApi(
        "wgmma",
        "cuda",
        "wgmma.cu",
        "wgmma",
        "1 warpgroup",
        {
            "f16_f32": ((64, 0, 16, _WG + "k16.f32.f16.f16"),),
            "f16_f16": ((64, 0, 16, _WG + "k16.f16.f16.f16"),),
            "bf16_f32": ((64, 0, 16, _WG + "k16.f32.bf16.bf16"),),
            "s8_s32": ((64, 0, 32, _WG + "k32.s32.s8.s8"),),
            "e4m3_f32": ((64, 0, 32, _WG + "k32.f32.e4m3.e4m3"),),
            "e5m2_f32": ((64, 0, 32, _WG + "k32.f32.e5m2.e5m2"),),
        },
        {},
        "wgmma",
        whole_n=WGMMA_N,
        shapes=WGMMA_SHAPES,
        max_dim=256,
        group_threads=WARPGROUP_THREADS,
        block=WARPGROUP_THREADS,
        groups=(1024, 256),
        constants=WGMMA_CONSTANTS,
    ),
    MatrixApi(
        "mma",
        "cuda",
        "matrix.cu",
        "matrix",
        "1 warp",
        {"f16_f32": _MMA_F16, "f16_f16": _MMA_F16, "bf16_f32": _MMA_F16, "s8_s32": _MMA_S8},
        {"e4m3_f32": _NO_FP8_MMA, "e5m2_f32": _NO_FP8_MMA},
        "mma.sync",
    ),
    MatrixApi(
        "simdgroup_matrix",
        "metal",
        "matrix.metal",
        "matrix",
        "1 simdgroup",
        {"f16_f32": _SG, "f16_f16": _SG},
        {
            "s8_s32": "MSL has no integer simdgroup_matrix (its element types are half, float and, from "
            "MSL 3.1, bfloat)",
            "bf16_f32": "simdgroup_bfloat8x8 needs MSL 3.1; the backend compiles MSL 3.0 (macOS 13)",
            "e4m3_f32": _NO_FP8_METAL,
            "e5m2_f32": _NO_FP8_METAL,
        },
        "simdgroup_matrix",
    ),
    MatrixApi(
        "mpp",
        "metal",
        "matrix_mpp.metal",
        "mpp",
        "1 simdgroup (execution_simdgroup)",
        {},
        {"e4m3_f32": _NO_FP8_METAL, "e5m2_f32": _NO_FP8_METAL},
        "matmul2d",
        whole_tile=True,
    ),
)
API_BY_NAME: Dict[str, MatrixApi] = {a.name: a for a in APIS}


def check_shape(m: object, n: object, k: object, max_dim: int = 128) -> Tuple[int, int, int]:
    """(m, n, k) as ints if each is a positive multiple of 8 up to ``max_dim`` (an API's
    :attr:`MatrixApi.max_dim`: 128, 256 for wgmma).

    Raises:
        ValueError: one line naming the bad dimension and the valid range.
    """
    out = []
    for name, v in (("M", m), ("N", n), ("K", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 8 <= int(v) <= max_dim or int(v) % 8:
            raise ValueError(f"matrix: tile {name} = {v!r} must be a multiple of 8 from 8 to {max_dim}")
        out.append(int(v))
    return out[0], out[1], out[2]


def compose(api: MatrixApi, p: MatrixPrecision, m: int, n: int, k: int) -> Composition:
    """How ``api`` builds an M×N×K tile of precision ``p``: the first of its fragments that divides
    the tile (largest K first), or the reason none does (the precision is missing, M or N is not a
    multiple of the fragment's, K smaller than the smallest fragment K; for wgmma, M is not 64, N
    not one of :attr:`MatrixApi.whole_n`, K not a multiple of the instruction's).

    Raises:
        ValueError: a dimension out of :func:`check_shape`'s range."""
    m, n, k = check_shape(m, n, k, api.max_dim)
    if p.suffix in api.missing:
        return Composition(reason=api.missing[p.suffix])
    if api.whole_tile:
        return Composition((m, n, k), f"matmul2d_descriptor({m}, {n}, {k})")
    frags = api.fragments.get(p.suffix, ())
    if not frags:
        return Composition(reason=f"{api.name} has no {p.dtype} fragment")
    if api.whole_n:
        return _compose_whole_n(api, p, frags[0], m, n, k)
    return _compose_fragments(p, frags, m, n, k)


def _compose_whole_n(
    api: MatrixApi, p: MatrixPrecision, frag: Tuple[int, int, int, str], m: int, n: int, k: int
) -> Composition:
    """A wgmma-style tile (one instruction of the whole N): M the instruction's, N one of
    :attr:`MatrixApi.whole_n`, K a multiple of the fragment ``frag``'s, or the reason it is not."""
    fm, _, fk, name = frag
    if m != fm:
        return Composition(reason=f"M = {m}: {api.name} tiles have the instruction's M = {fm} rows (one warpgroup)")
    if n not in api.whole_n:
        return Composition(
            reason=f"N = {n} is not one of the {api.name} N this kernel builds ({', '.join(map(str, api.whole_n))})"
        )
    if k % fk:
        return Composition(reason=f"K = {k} is not a multiple of the {p.input} {api.name} K ({fk})")
    return Composition((fm, n, fk), name.format(n=n))


def _compose_fragments(
    p: MatrixPrecision, frags: Sequence[Tuple[int, int, int, str]], m: int, n: int, k: int
) -> Composition:
    """A tile of fragments: the first of ``frags`` (largest K first) whose K divides ``k``, M and N
    multiples of the fragments' (they share them), or the reason none does."""
    fm, fn, _, name = frags[0]
    if m % fm or n % fn:
        return Composition(
            reason=f"{'M' if m % fm else 'N'} = {m if m % fm else n} is not a multiple of the "
            f"{name.rsplit('.', 1)[-1]} fragment's {fm if m % fm else fn} "
            f"{'rows' if m % fm else 'columns'}"
        )
    for fm, fn, fk, name in frags:
        if k % fk == 0:
            return Composition((fm, fn, fk), name)
    return Composition(
        reason=f"K = {k} is not a multiple of the smallest {p.input} fragment K "
        f"({min(f[2] for f in frags)}, {frags[-1][3]})"
    )


def largest_shape(api: MatrixApi, p: MatrixPrecision) -> Optional[Tuple[int, int, int]]:
    """The one tile of ``api``'s sweep a default run measures for ``p``: the largest the instruction
    builds (most M·N·K, then the longest K) among those whose accumulator holds at most
    :data:`MAX_ACC_PER_THREAD` elements per thread of the work group, or None where it builds none.

    A rule over the table, not a measured choice. A larger tile gives every A and B element it holds
    to more multiply-accumulates and issues more of them per instruction; but the accumulator lives in
    registers, and one that takes half a thread's 255 leaves room for too few work groups per SM to
    keep the matrix unit busy across each chain's waits (wgmma at N = 256: 128 per thread, 3
    warpgroups per H100 SM against 5 at N = 128). So: wgmma 64×128×64; mma.sync, simdgroup_matrix
    and matmul2d 32×32×128, whose accumulators hold 32 per thread."""
    built = [s for s in api.shapes if compose(api, p, *s).ok and s[0] * s[1] <= MAX_ACC_PER_THREAD * api.group_threads]
    return max(built, key=lambda s: (s[0] * s[1] * s[2], s[2])) if built else None


def ops_per_group(m: int, n: int, k: int, iters: int = ITERS, reps: int = REPS) -> int:
    """Operations of one work group: iters · reps · 2·M·N·K (an FMA is 2)."""
    return iters * reps * 2 * m * n * k


def bytes_per_launch(p: MatrixPrecision, m: int, n: int, k: int, groups: int) -> int:
    """Compulsory traffic of a launch of ``groups`` work groups: A and B once, each group's C."""
    return (m * k + k * n) * ITEMSIZE[p.input] + groups * m * n * ITEMSIZE[p.acc]


def matrix_inputs(p: MatrixPrecision, m: int, n: int, k: int, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """A (M×K) and B (K×N) as int64 arrays of the values the kernel multiplies (module docstring:
    small integers; the cancelling pair for an FP16 accumulator and for FP8 inputs)."""
    rng = np.random.default_rng(seed + 1000 * m + 100 * n + k)
    if p.acc == "fp16" or p.input in FP8:
        h = k // 2
        P = rng.integers(-1, 2, (m, h))
        Q = rng.integers(-1, 2, (h, n))
        a = np.concatenate([P, P], axis=1)
        b = np.concatenate([Q, -Q], axis=0)
        rows = rng.integers(0, k, n)
        b[rows, np.arange(n)] += rng.choice(np.array([-1, 1]), n)
        return a.astype(np.int64), b.astype(np.int64)
    lo, hi = (-8, 8) if p.input == "int8" else (-3, 4)
    return rng.integers(lo, hi, (m, k)).astype(np.int64), rng.integers(lo, hi, (k, n)).astype(np.int64)


def matrix_reference(a: np.ndarray, b: np.ndarray, iters: int = ITERS, reps: int = REPS) -> np.ndarray:
    """C = iters · reps · (A·B) exactly (int64)."""
    return iters * reps * (np.asarray(a, np.int64) @ np.asarray(b, np.int64))


def to_storage(values: np.ndarray, dtype: str) -> np.ndarray:
    """Integer ``values`` in the storage of ``dtype`` (bf16 as uint16 bit patterns: the upper half of
    the float32, exact for small integers; e4m3 and e5m2 as their byte codes, :func:`.fp8.encode`)."""
    if dtype in FP8:
        return fp8_encode(values, dtype)
    if dtype == "bf16":
        return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.asarray(values).astype(
        {"fp16": np.float16, "fp32": np.float32, "int8": np.int8, "int32": np.int32}[dtype]
    )


def from_storage(stored: np.ndarray, dtype: str) -> np.ndarray:
    """The values of ``stored`` (``dtype``'s storage) as float64."""
    if dtype in FP8:
        return fp8_decode(stored, dtype)
    if dtype == "bf16":
        return (np.asarray(stored, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(stored).astype(np.float64)


def _all_equal_natively(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether each row of ``got`` (groups × M·N, a numeric dtype) equals ``want`` (M·N) exactly,
    compared in ``got``'s dtype; False also where some element of ``want`` is not exactly a value of
    that dtype (the caller then compares in float64)."""
    w64 = want.astype(np.float64)
    if not np.all(np.isfinite(w64)):
        return False
    dt = got.dtype
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        if not np.all((w64 >= info.min) & (w64 <= info.max)):
            return False
    elif not np.issubdtype(dt, np.floating):
        return False
    w = w64.astype(dt)
    if not np.array_equal(w.astype(np.float64), w64):
        return False
    return tiled_within(got.reshape(-1), w, 0.0, 0.0)  # every row equals w: no tolerance is equality


def check_tile_output(got: np.ndarray, want: np.ndarray, groups: int) -> Tuple[bool, str]:
    """Whether each of ``groups`` M×N tiles in ``got`` (flat, accumulator storage) equals ``want``
    exactly. NaN and unwritten (poisoned) elements never pass. Returns (ok, message naming the count
    of wrong elements and the first one, with its group, row and column).

    Where every element of ``want`` is exactly a value of ``got``'s dtype, the tiles are compared in
    that dtype, from each column's extremes a block of groups at a time on threads
    (:func:`~..base.tiled_within` with no tolerance): the conversion to float64 is exact and keeps
    (in)equality, so the decision is the float64 comparison's without its float64 copy of ``got``. A
    failing output is compared again in float64 for the message."""
    mn = want.size
    if _all_equal_natively(np.asarray(got).reshape(groups, mn), want.reshape(mn)):
        return True, f"{groups * mn} elements ({groups} tiles) equal the NumPy reference exactly"
    g = np.asarray(got, dtype=np.float64).reshape(groups, mn)
    w = want.reshape(1, mn).astype(np.float64)
    bad = ~(g == w)
    nbad = int(np.count_nonzero(bad))
    if nbad:
        gi, ei = np.unravel_index(int(np.argmax(bad)), bad.shape)
        n_cols = want.shape[1] if want.ndim == 2 else mn
        return False, (
            f"{nbad} of {g.size} elements differ from the NumPy reference; first in work group {gi} "
            f"at row {ei // n_cols}, column {ei % n_cols}: got {g[gi, ei]!r}, want {w[0, ei]!r}"
        )
    return True, f"{g.size} elements ({groups} tiles) equal the NumPy reference exactly"


def kernel_def(
    api: MatrixApi,
    p: MatrixPrecision,
    m: int,
    n: int,
    k: int,
    constants: Optional[Mapping[str, Union[int, float]]] = None,
) -> KernelDef:
    """The KernelDef of one tile shape: kernel ``<api>_<M>x<N>x<K>``, dtype ``p.dtype``, the compute
    ceiling class ``api.ceiling_class(p)`` ("Matrix FP16→FP32 (mma.sync)")."""
    return KernelDef(
        "matrix",
        f"{api.name}_{m}x{n}x{k}",
        p.dtype,
        {api.backend: (api.source, api.entry(p))},
        ceiling_class=api.ceiling_class(p),
        ceiling_kind="compute",
        constants={api.backend: dict(constants or {})},
    )


def gemm_class_of(dtype: str) -> str:
    """The GEMM ceiling class a matrix precision stands beside: ``"fp16→fp32"`` -> ``"GEMM FP16"``
    (the vendor library's product of the same inputs; cuBLAS accumulates FP16 in FP32); both FP8
    formats -> ``"GEMM FP8"`` (the precision's :attr:`MatrixPrecision.gemm`)."""
    p = PRECISION_BY_DTYPE.get(dtype)
    return f"GEMM {(p.gemm if p else dtype.split('→', 1)[0]).upper()}"


def pipe_class(ceiling_class: str, geforce: bool) -> Optional[str]:
    """The theoretical class whose peak bounds a matrix tile's class: the GEMM peak of its inputs
    (:func:`gemm_class_of`); none for an FP16-accumulating tile on a GeForce part (its tensor cores
    run FP16 accumulation at a rate no theoretical ceiling gives), nor for a class that is no tile's."""
    parsed = parse_matrix_class(ceiling_class)
    if parsed is None:
        return None
    p = PRECISION_BY_DTYPE.get(parsed[0])
    if p is not None and p.acc == "fp16" and geforce:
        return None
    return gemm_class_of(parsed[0])
