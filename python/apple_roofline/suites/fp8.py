"""The 8-bit floating-point formats of Hopper's tensor cores in NumPy (docs/design/matrix.md, "Matrix units").

NumPy has no FP8 type, so the matrix suite writes FP8 inputs as their byte codes, made here, and its
tests read them back through the same model. The two formats are the OCP "OFP8" ones (OCP 8-bit
Floating Point Specification 1.0, 2023; PTX ISA ``.e4m3`` and ``.e5m2``): a sign bit, then

- **E4M3** (``e4m3``, "E4M3FN"): 4 exponent bits, bias 7, 3 mantissa bits; no infinities — the one
  code of all ones after the sign (S.1111.111) is NaN, so S.1111.000–110 are normal numbers and the
  largest is 1.75 · 2^8 = 448; the smallest subnormal is 2^-9.
- **E5M2** (``e5m2``): 5 exponent bits, bias 15, 2 mantissa bits, IEEE 754-like: exponent all ones
  is ±infinity (mantissa 0) or NaN; the largest finite is 1.75 · 2^15 = 57344; the smallest
  subnormal 2^-16.

Encoding rounds to nearest, ties to even; a value beyond the largest finite after rounding becomes NaN
in E4M3 (it has no infinity) and ±infinity in E5M2 (the conversions without saturation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

import numpy as np

__all__ = ["Fp8Format", "FORMATS", "encode", "decode"]


@dataclass(frozen=True)
class Fp8Format:
    """One FP8 format: exponent and mantissa bits, bias, whether the all-ones exponent is reserved
    for infinities and NaNs (``ieee``; E5M2) or only S.1111.111 is NaN (E4M3)."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    ieee: bool

    @property
    def max_finite(self) -> float:
        """The largest finite value (448 for E4M3, 57344 for E5M2)."""
        top = (1 << self.exponent_bits) - (2 if self.ieee else 1)
        mant = (1 << self.mantissa_bits) - (1 if self.ieee else 2)
        return float((1 + mant / (1 << self.mantissa_bits)) * 2.0 ** (top - self.bias))

    @property
    def nan_code(self) -> int:
        """The positive quiet NaN's code (0x7F in both)."""
        return 0x7F

    @property
    def inf_code(self) -> int:
        """+infinity's code (E5M2: 0x7C); E4M3 has none and uses NaN's."""
        return (((1 << self.exponent_bits) - 1) << self.mantissa_bits) if self.ieee else self.nan_code


FORMATS: Dict[str, Fp8Format] = {"e4m3": Fp8Format(4, 3, 7, ieee=False), "e5m2": Fp8Format(5, 2, 15, ieee=True)}


def _format(name: str) -> Fp8Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown FP8 format {name!r}: one of {', '.join(FORMATS)}") from None


def decode(codes: np.ndarray, fmt: str) -> np.ndarray:
    """The values (float64) of FP8 byte ``codes`` (any integer array, 0–255) in format ``fmt``
    ("e4m3" or "e5m2"). Raises ValueError for another format."""
    f = _format(fmt)
    c = np.asarray(codes).astype(np.int64) & 0xFF
    sign = np.where(c >> 7, -1.0, 1.0)
    e = (c >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1)
    m = c & ((1 << f.mantissa_bits) - 1)
    frac = m / float(1 << f.mantissa_bits)
    value = np.where(e == 0, frac * 2.0 ** (1 - f.bias), (1.0 + frac) * 2.0 ** (e - f.bias))
    top = (1 << f.exponent_bits) - 1
    if f.ieee:
        value = np.where(e == top, np.where(m == 0, np.inf, np.nan), value)
    else:
        value = np.where((e == top) & (m == (1 << f.mantissa_bits) - 1), np.nan, value)
    out: np.ndarray = sign * value
    return out


def encode(values: np.ndarray, fmt: str) -> np.ndarray:
    """The FP8 byte codes (uint8) of ``values`` in format ``fmt`` ("e4m3" or "e5m2"), rounded to
    nearest, ties to even (module docstring for NaN, infinities and overflow). Raises ValueError for
    another format."""
    f = _format(fmt)
    x = np.asarray(values, np.float64)
    sign = np.signbit(x).astype(np.int64) << 7
    a = np.abs(x)
    finite = np.isfinite(a)
    a0 = np.where(finite & (a > 0), a, 1.0)
    emin = 1 - f.bias  # the exponent of the smallest normal, and of the subnormals' spacing
    e = np.maximum(np.floor(np.log2(a0)), emin)
    q = 2.0 ** (e - f.mantissa_bits)
    r = np.where(finite, np.round(a / np.where(finite, q, 1.0)) * q, 0.0)  # np.round: half to even
    normal = r >= 2.0**emin
    er = np.where(normal, np.floor(np.log2(np.where(normal, r, 1.0))), emin)
    exp_field = np.where(normal, er + f.bias, 0).astype(np.int64)
    mant = np.where(normal, r / 2.0**er - 1.0, r / 2.0**emin) * (1 << f.mantissa_bits)
    codes = (exp_field << f.mantissa_bits) | np.rint(mant).astype(np.int64)
    codes = np.where(r > f.max_finite, f.inf_code, codes)
    codes = np.where(np.isinf(a), f.inf_code, codes)
    codes = np.where(np.isnan(a), f.nan_code, codes)
    out: np.ndarray = (codes | sign).astype(np.uint8)
    return out
