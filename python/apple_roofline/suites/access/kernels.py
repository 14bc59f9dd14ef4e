"""The access-pattern kernels of the ``access`` suite: their table, counting and NumPy reference.

They measure two rules of Apple's GPU optimization guide ("Memory Access Patterns"): coalesced
against strided access (``x[gid * stride]``) and vectorized (``float4``) against scalar loads. Per
work item (one GPU thread; docs/design/rules.md, "The access-pattern rules"): copy one element of W
32-bit words (W = 1, 2, 4: ``uint``, ``uint2``, ``uint4`` loads and stores) from

    j(i) = (i mod M)·S + i div M,   M = n / S

to ``out[i]``, for n elements and a stride S, both powers of two. Adjacent work items read
elements S apart, as the guide's strided kernel does, but every element is read exactly once (the
read is a transposition of an S × M array), so every stride moves the same bytes through the same
two arrays and only the pattern differs. The index costs a mask, two shifts and an or (no divide:
Apple GPUs divide in software). The words are copied as bits (no arithmetic), so the input is
the identity ``in[w] = w`` and the reference is exact: ``out[i·W + c] = j(i)·W + c``.

Counting: no FLOPs; bytes are the compulsory traffic, each element read once and written once:
8·W bytes per work item, so GB/s is the effective bandwidth; a pattern that wastes part of each
cache line or memory transaction shows as fewer GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np

from ..base import KernelDef

__all__ = [
    "AccessKernel",
    "ACCESS_KERNELS",
    "ACCESS_STRIDES",
    "ACCESS_BY_NAME",
    "check_stride",
    "strided_index",
    "identity_words",
    "expected_words",
    "check_access",
]

#: Strides in elements (of the kernel's width) the suite measures.
ACCESS_STRIDES: Tuple[int, ...] = (1, 2, 4, 8, 16, 32)


def check_stride(stride: object, n: int) -> int:
    """``stride`` as an int if it is a power of two from 1 to ``n`` (itself a power of two).

    Raises:
        ValueError: one line naming the stride (or n) and the valid range.
    """
    if n < 1 or n & (n - 1):
        raise ValueError(f"access: {n} elements is not a power of two")
    if (
        isinstance(stride, bool)
        or not isinstance(stride, (int, np.integer))
        or stride < 1
        or stride > n
        or int(stride) & (int(stride) - 1)
    ):
        raise ValueError(f"access: stride {stride!r} must be a power of two from 1 to {n}")
    return int(stride)


def strided_index(i: np.ndarray, n: int, stride: int) -> np.ndarray:
    """j(i) of the module docstring for element indices ``i`` (uint64), with n and ``stride`` powers
    of two (checked)."""
    stride = check_stride(stride, n)
    sh = stride.bit_length() - 1
    m = n >> sh
    lm = m.bit_length() - 1
    i = np.asarray(i, dtype=np.uint64)
    out: np.ndarray = ((i & np.uint64(m - 1)) << np.uint64(sh)) | (i >> np.uint64(lm))
    return out


@dataclass(frozen=True)
class AccessKernel:
    """One access kernel: ``width`` 32-bit words per element (its load and store width)."""

    width: int

    @property
    def name(self) -> str:
        """The measurement's kernel name: ``scalar``, ``vec2``, ``vec4``."""
        return "scalar" if self.width == 1 else f"vec{self.width}"

    @property
    def entry(self) -> str:
        """The entry on every backend, e.g. ``access_u32x4``."""
        return "access_u32" if self.width == 1 else f"access_u32x{self.width}"

    def bytes_per_item(self) -> int:
        """Compulsory traffic per work item: one element of 4·width bytes read and one written."""
        return 8 * self.width

    def kernel_def(self) -> KernelDef:
        """The suite's KernelDef: the CPU's built-in kernel, ``access.cu``, ``access.metal`` and the
        WGSL twin (``access_scalar.wgsl``, ``access_vec2.wgsl``, ``access_vec4.wgsl``: a binding has one
        element type), never a ceiling (the rules are ratios between kernels, not ceilings)."""
        e = self.entry
        return KernelDef(
            "access",
            self.name,
            "uint32",
            {
                "cpu": ("rules.cpp", e),
                "cuda": ("access.cu", e),
                "metal": ("access.metal", e),
                "wgpu": (f"access_{self.name}.wgsl", e),
            },
            # WebGPU: built without naga's runtime checks: j(i) is a permutation of the n elements
            # (n and S powers of two, check_stride) and every access is guarded by n
            constants={"cuda": {"BLOCK": 256}, "wgpu": {"BLOCK": 256, "AR_RUNTIME_CHECKS": 0}},
        )


#: Every access kernel, scalar first.
ACCESS_KERNELS: Tuple[AccessKernel, ...] = (AccessKernel(1), AccessKernel(2), AccessKernel(4))
ACCESS_BY_NAME: Dict[str, AccessKernel] = {k.name: k for k in ACCESS_KERNELS}

#: Words per chunk of the identity fill and of the check.
_CHUNK = 1 << 22


def identity_words(words: int) -> "list[np.ndarray]":
    """The identity input ``in[w] = w`` over ``words`` 32-bit words, as a list of chunks (uint32)."""
    return [np.arange(s, min(s + _CHUNK, words), dtype=np.uint32) for s in range(0, words, _CHUNK)]


def expected_words(start: int, stop: int, n: int, width: int, stride: int) -> np.ndarray:
    """What the kernel writes into output words [start, stop) (multiples of ``width``) for n
    elements of ``width`` words read at ``stride``: ``j(i)·width + c``."""
    i = np.arange(start // width, stop // width, dtype=np.uint64)
    j = strided_index(i, n, stride)
    w = (j[:, None] * np.uint64(width) + np.arange(width, dtype=np.uint64)[None, :]).reshape(-1)
    out: np.ndarray = w.astype(np.uint32)
    return out


def check_access(got: np.ndarray, n: int, width: int, stride: int) -> Tuple[bool, str]:
    """Whether the output words ``got`` (n·width uint32) equal the reference exactly, chunk by
    chunk. Returns (ok, message naming the count of wrong words and the first one)."""
    total = n * width
    step = _CHUNK - _CHUNK % width
    nbad, first = 0, ""
    for start in range(0, total, step):
        stop = min(start + step, total)
        part = np.asarray(got[start:stop])
        want = expected_words(start, stop, n, width, stride)
        bad = part != want
        k = int(np.count_nonzero(bad))
        if k and not first:
            at = int(np.argmax(bad))
            first = f"; first at word {start + at}: got {int(part[at])}, want {int(want[at])}"
        nbad += k
    if nbad:
        return False, f"{nbad} of {total} words differ from the NumPy reference{first}"
    return True, f"{total} words equal the NumPy reference exactly"
