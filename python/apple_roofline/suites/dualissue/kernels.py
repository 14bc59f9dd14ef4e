"""The dual-issue kernels of the ``dualissue`` suite: their table, counting and NumPy references.

The A19/M5 article says Family 9 Apple GPUs (M3, M4, M5) issue an FP32 instruction together with an
FP16 or an integer one from one partition. These kernels ask the hardware (docs/design/rules.md, "Dual
issue"). Per work item (one GPU thread), eight independent chains of each kind it runs, F steps
each (F even), from eight input floats x:

- ``fp32``: ``c = fma(c, c, a)`` from c = x (the peak suite's scalar chain, a = -0.75);
- ``fp16``: ``h = fma(h, h, half(a))`` from h = half(x), in FP16 arithmetic;
- ``int32``: u = bits(x), v = u ^ 0x9E3779B9, then alternately ``u += v`` and ``v += u`` (mod 2^32):
  one dependent 32-bit add per step, which no compiler folds (a Fibonacci recurrence);
- ``fp32_fp16`` and ``fp32_int32``: both kinds in one loop, interleaved step by step.

So a mixed kernel runs exactly the operations of its two single kernels together. If the core
issues the two kinds in the same cycle, the mixed kernel takes as long as the slower of the two
alone; if it issues one instruction per cycle, as long as their sum. The suite reports
``mixed / (A + B)`` and ``mixed / max(A, B)`` from the medians
(:func:`apple_roofline.suites.dualissue.table.dualissue_table`).

The FP32 and integer results depend on every step (a kernel that ran F - 2 steps fails); FP16
chains reach a rounding fixed point of the map within a few hundred steps, as the peak suite's FP16
chains do, so the FP16 plane proves that the chains ran and were not folded away, not their count.

Outputs: plane 0 holds the first kind's results (8 words per work item: the bits of c, of
float(h), or u ^ v), plane 1 (at word 8n) the second kind's in a mixed kernel.

Counting (per lane, docs/design/measurement.md, "Counting FLOPs and bytes"): an FMA is 2 FLOPs in FP32 and in
FP16; an integer add is one integer operation, named so. The measurement's ``flops`` field holds
the floating-point FLOPs (2 × 8 × F per kind), or for ``int32`` alone the integer operations (8 × F,
as the idiv suite and the INT8 GEMM carry theirs); ``params`` give each count by name
(``fp32_flops``, ``fp16_flops``, ``int_ops`` per work item). Bytes: 32 read and 32 (one kind) or
64 (two kinds) written per work item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np

from ..base import KernelDef, pattern
from ..fma import CHAIN_A, FMA_KERNELS, FmaKernel, tolerance

__all__ = [
    "DualKernel",
    "DUAL_KERNELS",
    "DUAL_BY_NAME",
    "DUAL_PAIRS",
    "DUAL_F",
    "STEP",
    "dual_input",
    "int_reference",
    "kind_reference",
    "kind_tolerance",
    "CHAINS",
]

#: Steps per chain (even: the loop runs F/2 iterations of two steps).
DUAL_F = 512
#: Independent chains of each kind per work item.
CHAINS = 8
#: The integer chains' seed constant (2^32 / golden ratio).
STEP = 0x9E3779B9
#: The scalar FMA chain whose recurrence the FP32 and FP16 chains share.
_CHAIN: FmaKernel = FMA_KERNELS["scalar_indep8"]


@dataclass(frozen=True)
class DualKernel:
    """One dual-issue kernel: ``kinds``, one or two of "fp32", "fp16", "int32"."""

    kinds: Tuple[str, ...]

    @property
    def name(self) -> str:
        """``fp32``, ``fp32_fp16`` ... (the measurement's kernel name)."""
        return "_".join(self.kinds)

    @property
    def entry(self) -> str:
        """The entry on every backend, e.g. ``dual_fp32_int32``."""
        return f"dual_{self.name}"

    @property
    def mixed(self) -> bool:
        return len(self.kinds) == 2

    def counts(self, F: int) -> Dict[str, int]:
        """Operations per work item by name: ``fp32_flops``, ``fp16_flops`` (2 per FMA per lane),
        ``int_ops`` (one per add)."""
        return {
            "fp32_flops": 2 * CHAINS * F if "fp32" in self.kinds else 0,
            "fp16_flops": 2 * CHAINS * F if "fp16" in self.kinds else 0,
            "int_ops": CHAINS * F if "int32" in self.kinds else 0,
        }

    def flops_per_item(self, F: int) -> int:
        """The ``flops`` field per work item: the FP FLOPs, or the integer ops where there are none."""
        c = self.counts(F)
        fp = c["fp32_flops"] + c["fp16_flops"]
        return fp if fp else c["int_ops"]

    def words_out(self) -> int:
        """Output words per work item: 8 per kind."""
        return CHAINS * len(self.kinds)

    def bytes_per_item(self) -> int:
        """Compulsory traffic per work item: 8 floats read, 8 words written per kind."""
        return 4 * (CHAINS + self.words_out())

    @property
    def dtype(self) -> str:
        """The measurement's dtype: the kinds joined by "+" (e.g. ``fp32+int32``)."""
        return "+".join(self.kinds)

    def kernel_def(self) -> KernelDef:
        """The suite's KernelDef: the CPU's built-in kernel, ``dualissue.cu`` and ``dualissue.metal``,
        never a ceiling. On CUDA 512 threads per block and the chain constant as literals, as the peak
        suite's chains (:meth:`.fma.FmaKernel.constants`)."""
        e = self.entry
        return KernelDef(
            "dualissue",
            self.name,
            self.dtype,
            {"cpu": ("rules.cpp", e), "cuda": ("dualissue.cu", e), "metal": ("dualissue.metal", e)},
            constants=FmaKernel.constants(),
        )


def dual_input(seed: int = 7) -> np.ndarray:
    """One period of the input floats (the FMA chains' pattern, uniform in [-0.5, 0.5))."""
    return pattern("fp32", -0.5, 0.5, seed=seed)


def int_reference(x: np.ndarray, F: int) -> np.ndarray:
    """``u ^ v`` after F steps of the integer chains from the bits of ``x`` (float32), as uint32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).copy()
    v = u ^ np.uint32(STEP)
    for _ in range(F // 2):
        u = u + v
        v = v + u
    out: np.ndarray = u ^ v
    return out


def kind_reference(kind: str, x: np.ndarray, F: int, a: float = CHAIN_A) -> np.ndarray:
    """What a plane of ``kind`` holds for inputs ``x`` (float32): float32 values for the FP kinds
    (float(h) for fp16), uint32 for ``int32``."""
    if kind == "int32":
        return int_reference(x, F)
    if kind == "fp32":
        out: np.ndarray = _CHAIN.reference(np.asarray(x, np.float32), F, "fp32", a)
        return out
    h = _CHAIN.reference(np.asarray(x, np.float32).astype(np.float16), F, "fp16", a)
    return np.asarray(h, np.float16).astype(np.float32)


def kind_tolerance(kind: str) -> Tuple[float, float]:
    """(rtol, atol) of a plane of ``kind``: the FMA chains' (:func:`.fma.tolerance`); integers exact."""
    return (0.0, 0.0) if kind == "int32" else tolerance(kind)


#: Every dual-issue kernel, in measurement order: each kind alone, then the mixed pairs.
DUAL_KERNELS: Tuple[DualKernel, ...] = (
    DualKernel(("fp32",)),
    DualKernel(("fp16",)),
    DualKernel(("int32",)),
    DualKernel(("fp32", "fp16")),
    DualKernel(("fp32", "int32")),
)
DUAL_BY_NAME: Dict[str, DualKernel] = {k.name: k for k in DUAL_KERNELS}
#: The pairs the report compares: (A alone, B alone, mixed).
DUAL_PAIRS: Tuple[Tuple[str, str, str], ...] = (("fp32", "fp16", "fp32_fp16"), ("fp32", "int32", "fp32_int32"))
