"""The FMA-chain kernels shared by the ``sweep`` and ``peak`` suites, and their NumPy references.

Per work item (one GPU thread; docs/design/measurement.md, "Counting FLOPs and bytes", after the M5 GPU
roofline analysis):

- ``vec4_cross4``: load one 4-wide vector x, set c = e = x and d = f = -1, run F iterations of four
  cross-dependent vector FMA chains ``c = fma(c,d,e); d = fma(d,e,f); e = fma(e,f,c); f = fma(f,c,d)``,
  store ``c + d + e + f``. 32·F FLOPs (per lane: 4 chains × 4 lanes × 2), 2 × 4 elements of traffic.
  Started there the recurrence stays bounded (|values| <= 1.6 for |x| <= 0.5) and decays only
  algebraically, so no value is infinite, NaN or denormal for any F <= 1024.
- ``vec4_indepK``: load one 4-wide vector x, run K self-dependent vector chains
  ``c_k = fma(c_k, c_k, a)`` from ``c_k = x + k/16``, store their sum. 8·K·F FLOPs.
- ``scalar_indepK``: load K consecutive scalars, run K self-dependent chains ``c_k = fma(c_k, c_k, a)``,
  store K scalars. 2·K·F FLOPs, 2 × K elements of traffic.

The constant a = -0.75 puts the map c -> c² + a exactly at its period-doubling point: its fixed
point -1/2 has derivative -1, so every chain started in (-1.5, 1.5) approaches it only
algebraically (|c + 1/2| ~ n^-1/2) while staying in [-0.5, 0.5] magnitude-wise. The output after F
iterations therefore depends on F — a kernel that ran F/16 (or, in fp32 and fp64, F/2 or F-2)
iterations fails validation — and nothing overflows or becomes denormal. (With a contracting map,
say a = -0.5, every chain would reach the same fixed point after a few dozen iterations and the
check could not tell 32 FMAs from 512.)

The epilogue additions (3 or K-1 per item) are not counted, as in the article. Every kernel is
elementwise in its output, so a reference over one period of the input pattern checks all of it.
References round every operation to the kernel's dtype as an FMA does, once: for fp16 and fp32 the
product of two operands is exact in float64 and the sum is (for these bounded values) exact or
rounded far below the dtype's precision, so rounding it to the dtype gives the fused result; for fp64
an error-free transformation (Dekker's product, Knuth's sum) does. The references therefore follow a
fusing device's trajectory to the last bit or within an ulp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Sequence, Tuple, Union

import numpy as np

from .base import EPS, ITEMSIZE, NUMPY_DTYPE, unreachable

__all__ = ["FmaKernel", "FMA_KERNELS", "CHAIN_A", "FP16_MAX", "round_to_fp16", "tolerance"]

#: The additive constant of the self-dependent chains (see the module docstring).
CHAIN_A = -0.75

_DTYPE_SUFFIX = {"fp16": "f16", "fp32": "f32", "fp64": "f64"}


def _fma64(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """x·y + z in float64 with (nearly always) a single rounding: Dekker's TwoProduct (Veltkamp
    split) and Knuth's TwoSum recover the exact product and sum, then one final addition rounds."""
    split = 134217729.0  # 2**27 + 1

    def halves(a: np.ndarray) -> "tuple[np.ndarray, np.ndarray]":
        c = split * a
        hi = c - (c - a)
        return hi, a - hi

    p = x * y
    xh, xl = halves(x)
    yh, yl = halves(y)
    e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl  # p + e == x*y exactly
    s = p + z
    bb = s - p
    t = (p - (s - bb)) + (z - bb)  # s + t == p + z exactly
    out: np.ndarray = s + (t + e)
    return out


#: The largest finite fp16 value; a value rounded beyond it is infinite.
FP16_MAX = float(np.finfo(np.float16).max)
_EXPONENT_BITS = np.int64(0x7FF << 52)  # a float64's exponent field
_FP16_MIN_EXPONENT = np.int64((1023 - 14) << 52)  # 2^-14, fp16's smallest normal, as float64 bits
_TEN_BITS = np.int64(10 << 52)  # 2^-10 as a change of exponent: fp16's spacing at 1.0


def round_to_fp16(v: np.ndarray) -> np.ndarray:
    """``v`` (float64) rounded to fp16, to nearest with ties to even, as float64: the values of
    ``v.astype(np.float16).astype(np.float64)`` bit for bit (NaN stays NaN; beyond ±FP16_MAX after
    rounding is ±inf), without its cost on values in fp16's subnormal range (NumPy's conversion
    raises the underflow flag element by element there: the fp16 FMA chains' products fall in it,
    and rounding them took 10–30× as long as other values).

    Each element is divided by fp16's spacing at its magnitude, 2^(e − 10) for 2^e ≤ |v| (at least
    2^-24, the subnormals' spacing; a power of two, so the division is exact), rounded to an
    integer with :func:`numpy.rint` (ties to even) and multiplied back (exact)."""
    spacing = np.bitwise_and(v.view(np.int64), _EXPONENT_BITS)
    np.maximum(spacing, _FP16_MIN_EXPONENT, out=spacing)
    spacing -= _TEN_BITS
    sp = spacing.view(np.float64)
    out: np.ndarray = np.divide(v, sp)
    np.rint(out, out=out)
    out *= sp
    if not (out.max(initial=0.0) <= FP16_MAX and out.min(initial=0.0) >= -FP16_MAX):
        big = np.abs(out) > FP16_MAX
        out[big] = np.copysign(np.inf, v[big])
    return out


@dataclass(frozen=True)
class FmaKernel:
    """An FMA-chain kernel: ``width`` 4 (vec4) or 1 (scalar), ``chains`` per work item, ``cross``
    for the cross-dependent pattern."""

    name: str
    width: int
    chains: int
    cross: bool = False

    @property
    def elems_per_item(self) -> int:
        """Elements of each buffer (input and output) one work item touches."""
        return 4 if self.width == 4 else self.chains

    def flops_per_item(self, F: int) -> int:
        """FLOPs per work item: 2 per FMA per lane (docs/design/measurement.md, "Counting FLOPs and bytes")."""
        return 2 * F * self.chains * self.width

    def bytes_per_item(self, dtype: str) -> int:
        """Compulsory traffic per work item: its input read once and its output written once."""
        return 2 * self.elems_per_item * ITEMSIZE[dtype]

    @property
    def takes_a(self) -> bool:
        return not self.cross

    def entry(self, dtype: str) -> str:
        """The kernel's entry name, e.g. ``scalar_indep8_f32``: the CPU backend's built-in kernel and
        the function of the same name in ``shaders/cuda/fma.cu``."""
        return f"{self.name}_{_DTYPE_SUFFIX[dtype]}"

    def sources(self, dtype: str) -> Dict[str, Tuple[str, str]]:
        """``KernelDef.sources`` for this kernel in ``dtype``: the CPU's built-in kernel in
        ``native/cpu/kernels.cpp``, the CUDA kernel in ``fma.cu``, the Metal kernel in ``fma.metal`` and
        the WGSL one (:meth:`wgsl_source`; the same recurrence, operation for operation; Metal has no
        fp64, as Apple GPUs have no FP64 arithmetic)."""
        e = self.entry(dtype)
        out = {"cpu": ("kernels.cpp", e), "cuda": ("fma.cu", e)}
        if dtype != "fp64":
            out["metal"] = ("fma.metal", e)
        out["wgpu"] = self.wgsl_source(dtype)
        return out

    def wgsl_source(self, dtype: str) -> Tuple[str, str]:
        """The WGSL twin: ``fma_cross``, ``fma_vec4`` or ``fma_scalar`` (``_f16`` for fp16).wgsl, one
        file per element type and argument list (a WGSL binding has one type); fp64 is not reachable
        through WebGPU (WGSL has no f64), so its source says so (:data:`~.base.UNREACHABLE`)."""
        if dtype == "fp64":
            return unreachable("WGSL has no f64 type, so no FP64 FMA chain (wgpu-native's shader-f64 is not WebGPU)")
        stem = "fma_cross" if self.cross else ("fma_vec4" if self.width == 4 else "fma_scalar")
        return (f"{stem}{'_f16' if dtype == 'fp16' else ''}.wgsl", self.entry(dtype))

    @staticmethod
    def constants(a: float = CHAIN_A) -> Dict[str, Dict[str, Union[int, float]]]:
        """``KernelDef.constants`` of every FMA-chain kernel on CUDA: 512 threads per block (on an
        H100, vec4_indep8 reached 64.4 TFLOP/s with 512 against 62.6 with 256 at the same launch),
        and the chain constant ``a`` as a literal (CHAIN_A, and CHAIN_A_F16 its fp16 bit pattern;
        shaders/cuda/fma.cu says why). The kernels still receive ``a`` as an argument, and the
        reference uses that one, so a literal that disagreed with it would fail validation."""
        bits = int(np.asarray(a, dtype=np.float16).view(np.uint16))
        return {
            "cuda": {"BLOCK": 512, "CHAIN_A": float(a), "CHAIN_A_F16": bits},
            # WebGPU: the same literal as an override constant, and the module built without naga's
            # runtime checks (the kernels' accesses are in range by the work-item guard and every loop
            # ends: docs/design/backends.md, "The WebGPU backend")
            "wgpu": {"BLOCK": 256, "CHAIN_A": float(a), "AR_RUNTIME_CHECKS": 0},
        }

    def reference(self, x: np.ndarray, F: int, dtype: str, a: float = CHAIN_A) -> np.ndarray:
        """What the kernel writes for input elements ``x`` (1-D), rounded as the device rounds."""
        return self.references(x, [F], dtype, a)[F]

    def references(
        self, x: np.ndarray, Fs: Iterable[int], dtype: str, a: float = CHAIN_A, fused: bool = True
    ) -> Dict[int, np.ndarray]:
        """:meth:`reference` at every F of ``Fs`` (non-negative), from one pass of max(Fs) iterations:
        the chains' state after F iterations is the same whatever number follows, so each F's output
        is taken from the state as the pass goes by it (the sweep's F = 1, 4 … 1024 cost 1024
        iterations, not 1365). ``fused`` False rounds each FMA's product and then its sum (fp16 and
        fp32: the trajectory of a device that does not fuse, which WGSL allows). Returns {F: output}."""
        wanted = sorted(set(int(F) for F in Fs))
        if wanted and wanted[0] < 0:
            raise ValueError(f"F must be non-negative, not {wanted[0]}")
        t = NUMPY_DTYPE[dtype]
        x64 = x.astype(t).astype(np.float64)
        if self.cross:
            return _cross_references(x64, wanted, dtype, fused)
        return self._chain_references(x64, wanted, dtype, float(np.asarray(a, dtype=t)), fused)

    def _chain_references(
        self, x64: np.ndarray, wanted: Sequence[int], dtype: str, a64: float, fused: bool
    ) -> Dict[int, np.ndarray]:
        """The independent chains' outputs at each F of ``wanted`` (ascending), from one pass."""
        t, r, fma = NUMPY_DTYPE[dtype], _rounder(dtype), _fma_op(dtype, fused)
        if self.width == 4:
            cs = np.stack([r(x64 + k * 0.0625) for k in range(self.chains)])
        else:
            cs = x64[None, :]
        a_arr = np.full_like(cs, a64)
        out: Dict[int, np.ndarray] = {}
        done = 0
        for F in wanted:
            for _ in range(F - done):
                cs = fma(cs, cs, a_arr)
            done = F
            s = cs[0]
            if self.width == 4:
                for k in range(1, self.chains):
                    s = r(s + cs[k])
            out[F] = s.astype(t)
        return out


Op = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _rounder(dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    """Rounding of a float64 array to ``dtype``'s values (kept in float64)."""
    t = NUMPY_DTYPE[dtype]
    if dtype == "fp16":
        return round_to_fp16
    return lambda v: v.astype(t).astype(np.float64)


def _fma_op(dtype: str, fused: bool) -> Op:
    """``p * q + s`` as ``dtype`` computes it: one rounding (fused), or the product rounded and then the
    sum (``fused`` False); fp64 through :func:`_fma64`."""
    if dtype == "fp64":
        return _fma64
    r = _rounder(dtype)
    if fused:
        return lambda p, q, s: r(p * q + s)  # exact in float64, then one rounding to the dtype
    return lambda p, q, s: r(r(p * q) + s)  # the product rounded to the dtype, then the sum


def _cross_references(x64: np.ndarray, wanted: Sequence[int], dtype: str, fused: bool) -> Dict[int, np.ndarray]:
    """The four cross-dependent chains' outputs at each F of ``wanted`` (ascending), from one pass."""
    t, r, fma = NUMPY_DTYPE[dtype], _rounder(dtype), _fma_op(dtype, fused)
    c, e = x64.copy(), x64.copy()
    d = np.full_like(x64, -1.0)
    f = np.full_like(x64, -1.0)
    out: Dict[int, np.ndarray] = {}
    done = 0
    for F in wanted:
        for _ in range(F - done):
            c = fma(c, d, e)
            d = fma(d, e, f)
            e = fma(e, f, c)
            f = fma(f, c, d)
        done = F
        out[F] = r(r(r(c + d) + e) + f).astype(t)
    return out


def tolerance(dtype: str) -> Tuple[float, float]:
    """(rtol, atol) for the FMA chains: a few ulps of drift where a device does not fuse, or
    rounds an FMA differently from the reference, scaled by the dtype's machine epsilon."""
    factor = 16.0 if dtype == "fp16" else 128.0
    return factor * EPS[dtype], factor * EPS[dtype]


#: Every FMA-chain kernel, by name.
FMA_KERNELS: Dict[str, FmaKernel] = {
    k.name: k
    for k in (
        FmaKernel("vec4_cross4", 4, 4, cross=True),
        FmaKernel("vec4_indep4", 4, 4),
        FmaKernel("vec4_indep8", 4, 8),
        FmaKernel("scalar_indep4", 1, 4),
        FmaKernel("scalar_indep8", 1, 8),
        FmaKernel("scalar_indep16", 1, 16),
        FmaKernel("scalar_indep32", 1, 32),
    )
}
