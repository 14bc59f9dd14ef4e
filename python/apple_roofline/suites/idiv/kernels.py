"""The integer-divide kernels of the ``idiv`` suite: their table, counting and NumPy reference.

Per work item (one GPU thread; docs/design/measurement.md, "Counting FLOPs and bytes"): load one 32-bit word x,
run a chain of F dependent steps

    x = x + (x OP d) + STEP   (mod 2^32)

and store x once. OP is ``/`` or ``%``, in uint32 or int32 (truncating division, as C, CUDA and
MSL divide; the two additions wrap, done in unsigned arithmetic); STEP = 0x9E3779B9. Each step
needs the previous one's result, so a work item is one dependent chain of F divides.

The chain never stalls: ``x' == x`` needs ``(x OP d) ≡ -STEP = 1640531527 (mod 2^32)``, and for
3 <= d <= 2^31-1 no quotient or remainder reaches that (unsigned quotients are below 2^32/3 =
1431655765, signed ones within ±2^31/3, remainders within ±d), so no value is a fixed point and the
output after F steps depends on every step; tests check that no trajectory of the input pattern
repeats a value within the chain. The variants, by where the divisor comes from:

- ``pow2_literal``: 256 written in the source (a shift, plus a sign fix-up when signed);
- ``literal``: 255 written in the source (a multiply-high "magic number" sequence);
- ``constant``: IDIV_DIVISOR as a specialisation constant: NVRTC ``-DDIVISOR``, a Metal function
  constant, a WGSL pipeline-overridable ``override``, a C++ template parameter on the CPU (where an
  ahead-of-time compiler sees it as it sees a literal);
- ``argument``: IDIV_DIVISOR passed as a kernel argument (a uniform buffer through WebGPU), known only
  at dispatch.

WGSL's ``/`` and ``%`` truncate as C's; where C's are undefined WGSL defines them (``x / 0 = x``,
``x % 0 = 0``, ``INT_MIN / -1 = INT_MIN``, ``INT_MIN % -1 = 0``), cases :func:`check_divisor`'s range
never reaches, so the one reference holds on every backend.

Counting: F operations (divides or modulos) per work item; the two additions per step are not
counted, as the FMA chains do not count their epilogues. The ops travel in the measurement's
``flops`` field and the reports' GFLOP/s column, as the int8 GEMM's integer operations do. Bytes:
the compulsory traffic, one 4-byte word read and one written per item.

The divisor is not a command-line option: the suite always uses IDIV_DIVISOR (255, the article's
non-power-of-two example) and POW2_DIVISOR (256). :func:`check_divisor` is the library's guard,
applied wherever a divisor enters (the kernel table's constants, the arguments, the reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple, Union

import numpy as np

from ..base import PERIOD, KernelDef

__all__ = [
    "IdivKernel",
    "IDIV_KERNELS",
    "IDIV_VARIANTS",
    "IDIV_DIVISOR",
    "POW2_DIVISOR",
    "IDIV_F",
    "STEP",
    "check_divisor",
    "idiv_input",
    "check_exact",
    "IDIV_BY_LABEL",
]

#: Operations per chain (the F constant every backend compiles the kernels with).
IDIV_F = 256
#: The divisor of the ``literal``, ``constant`` and ``argument`` variants.
IDIV_DIVISOR = 255
#: The divisor of the ``pow2_literal`` variant.
POW2_DIVISOR = 256
#: The recurrence's additive constant (2^32 / golden ratio, odd).
STEP = 0x9E3779B9
#: Where the divisor comes from, in measurement order.
IDIV_VARIANTS: Tuple[str, ...] = ("pow2_literal", "literal", "constant", "argument")
#: Smallest and largest divisor for which the chain has no fixed point (module docstring).
MIN_DIVISOR, MAX_DIVISOR = 3, 2**31 - 1


def check_divisor(d: object) -> int:
    """``d`` as an int if it is an integer from 3 to 2^31-1.

    Raises:
        ValueError: one line: ``"idiv: divisor 0 divides by zero"`` for 0, else that the divisor
            must be an integer from 3 to 2147483647 (smaller divisors give the chain fixed points,
            larger ones do not fit a signed 32-bit divide).
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise ValueError(f"idiv: divisor {d!r} must be an integer from {MIN_DIVISOR} to {MAX_DIVISOR}")
    if int(d) == 0:
        raise ValueError("idiv: divisor 0 divides by zero")
    if not MIN_DIVISOR <= int(d) <= MAX_DIVISOR:
        raise ValueError(f"idiv: divisor {int(d)} must be an integer from {MIN_DIVISOR} to {MAX_DIVISOR}")
    return int(d)


@dataclass(frozen=True)
class IdivKernel:
    """One idiv kernel: ``op`` "div" or "mod", ``variant`` one of IDIV_VARIANTS, ``signed``."""

    op: str
    variant: str
    signed: bool

    @property
    def dtype(self) -> str:
        """ "int32" or "uint32" (the measurement's dtype)."""
        return "int32" if self.signed else "uint32"

    @property
    def name(self) -> str:
        """The measurement's kernel name, e.g. ``div_argument``."""
        return f"{self.op}_{self.variant}"

    @property
    def entry(self) -> str:
        """The entry point on every backend, e.g. ``idiv_div_u32_argument``."""
        return f"idiv_{self.op}_{'i32' if self.signed else 'u32'}_{self.variant}"

    @property
    def takes_divisor(self) -> bool:
        """Whether the divisor is a kernel argument (after in and out)."""
        return self.variant == "argument"

    def divisor(self, d: int = IDIV_DIVISOR) -> int:
        """The divisor this kernel divides by when the suite's divisor is ``d`` (checked)."""
        return POW2_DIVISOR if self.variant == "pow2_literal" else check_divisor(d)

    @staticmethod
    def ops_per_item(F: int) -> int:
        """Operations per work item: F divides (or modulos)."""
        return F

    @staticmethod
    def bytes_per_item() -> int:
        """Compulsory traffic per work item in bytes: one 32-bit word read, one written."""
        return 8

    def kernel_def(self, d: int = IDIV_DIVISOR) -> KernelDef:
        """The suite's KernelDef: the CPU's built-in kernel, ``idiv.cu``, ``idiv.metal`` and the WGSL
        twin (``idiv.wgsl``; ``idiv_argument.wgsl`` for the argument variant, which takes one more
        binding), never a ceiling. Every idiv kernel is built with DIVISOR = ``d``, which only the
        constant variant reads: NVRTC defines it for all (-DDIVISOR), while Metal sets a function
        constant only on a function that declares it, so the other variants' DIVISOR is skipped there
        (the backend's constant plan, native/core/metal_rules.h), as the WebGPU backend sets only the
        overrides a module declares; the CPU's constant variant has it as a template parameter
        (native/cpu/idiv.cpp)."""
        d = check_divisor(d)
        e = self.entry
        return KernelDef(
            "idiv",
            self.name,
            self.dtype,
            {
                "cpu": ("idiv.cpp", e),
                "cuda": ("idiv.cu", e),
                "metal": ("idiv.metal", e),
                "wgpu": ("idiv_argument.wgsl" if self.takes_divisor else "idiv.wgsl", e),
            },
            # WebGPU: DIVISOR an override (a module without one, idiv_argument.wgsl, skips it), the module
            # built without naga's runtime checks (every access is guarded by the work-item count)
            constants={
                "cuda": {"BLOCK": 256, "DIVISOR": d},
                "metal": {"DIVISOR": d},
                "wgpu": {"BLOCK": 256, "DIVISOR": d, "AR_RUNTIME_CHECKS": 0},
            },
        )

    def args(self, d: int = IDIV_DIVISOR) -> List[Union[int, float]]:
        """The scalar arguments after the two buffers: the divisor for ``argument``, else none."""
        return [check_divisor(d)] if self.takes_divisor else []

    def reference(self, x: np.ndarray, F: int, d: int = IDIV_DIVISOR, trajectory: bool = False) -> np.ndarray:
        """What the kernel writes for input words ``x`` (1-D uint32), as uint32 bit patterns.

        With ``trajectory``, every state instead: shape (F + 1, len(x)), row 0 the input.
        Vectorised over ``x``; integer arithmetic only (int64 for the signed quotient, wrapped)."""
        div = self.divisor(d)
        cur = np.asarray(x, dtype=np.uint32).copy()
        states = [cur] if trajectory else []
        step = np.uint32(STEP)
        for _ in range(F):
            if self.signed:
                xs = cur.view(np.int32).astype(np.int64)
                q = np.abs(xs) // div * np.sign(xs)  # truncating toward zero
                v = (q if self.op == "div" else xs - q * div).astype(np.uint32)  # wraps mod 2^32
            else:
                v = cur // np.uint32(div) if self.op == "div" else cur % np.uint32(div)
            cur = (cur + v + step).astype(np.uint32)
            if trajectory:
                states.append(cur)
        return np.stack(states) if trajectory else cur


def idiv_input(seed: int = 11, period: int = PERIOD) -> np.ndarray:
    """``period`` uniformly random 32-bit words (uint32), the input pattern; the signed kernels read
    the same bits as int32, so half their inputs are negative."""
    return np.random.default_rng(seed).integers(0, 2**32, period, dtype=np.uint32)


def check_exact(got: np.ndarray, period_ref: np.ndarray, chunk: int = PERIOD * 4096) -> Tuple[bool, str]:
    """Whether every ``got[i]`` equals ``period_ref[i % len(period_ref)]`` exactly (integers, compared
    in chunks). Returns (ok, message naming the count of wrong words and the first one)."""
    p = len(period_ref)
    chunk -= chunk % p
    nbad, first = 0, ""
    for start in range(0, got.size, chunk):
        part = np.asarray(got[start : start + chunk])
        want = np.resize(period_ref, part.size)
        bad = part != want
        n = int(np.count_nonzero(bad))
        if n and not first:
            i = int(np.argmax(bad))
            first = f"; first at {start + i}: got {int(part[i])}, want {int(want[i])}"
        nbad += n
    if nbad:
        return False, f"{nbad} of {got.size} words differ from the NumPy reference{first}"
    return True, f"{got.size} words equal the NumPy reference exactly"


#: Every idiv kernel, in measurement order: unsigned then signed, divide then modulo, each variant.
IDIV_KERNELS: Tuple[IdivKernel, ...] = tuple(
    IdivKernel(op, variant, signed) for signed in (False, True) for op in ("div", "mod") for variant in IDIV_VARIANTS
)

#: Lookup by (name, dtype).
IDIV_BY_LABEL: Dict[Tuple[str, str], IdivKernel] = {(k.name, k.dtype): k for k in IDIV_KERNELS}
