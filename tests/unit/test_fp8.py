"""The NumPy model of the FP8 formats (suites/fp8.py) against the OCP 8-bit floating-point
specification's definitions: code points worked out by hand from the bit fields, every code's
round trip, rounding to nearest even, and the special values."""

from __future__ import annotations

from typing import List, Tuple

import numpy as np
import pytest

from apple_roofline.suites.fp8 import FORMATS, decode, encode

# (code, value) worked out from sign | exponent | mantissa by hand
E4M3_POINTS = [
    (0x00, 0.0),
    (0x80, -0.0),
    (0x01, 2.0**-9),
    (0x07, 7 * 2.0**-9),
    (0x08, 2.0**-6),
    (0x38, 1.0),
    (0x39, 1.125),
    (0x40, 2.0),
    (0x44, 3.0),
    (0xC4, -3.0),
    (0x7E, 448.0),
    (0x78, 256.0),
]
E5M2_POINTS = [
    (0x00, 0.0),
    (0x01, 2.0**-16),
    (0x03, 3 * 2.0**-16),
    (0x04, 2.0**-14),
    (0x3C, 1.0),
    (0x3D, 1.25),
    (0x40, 2.0),
    (0x42, 3.0),
    (0xC2, -3.0),
    (0x7B, 57344.0),
]


@pytest.mark.parametrize("fmt,points", [("e4m3", E4M3_POINTS), ("e5m2", E5M2_POINTS)])
def test_code_points(fmt: str, points: List[Tuple[int, float]]) -> None:
    codes = np.array([c for c, _ in points])
    values = np.array([v for _, v in points])
    assert np.array_equal(decode(codes, fmt), values)
    assert np.array_equal(encode(values, fmt), codes.astype(np.uint8))
    assert np.signbit(decode(np.array([0x80]), fmt))[0]


def test_special_values() -> None:
    # E4M3: only S.1111.111 is NaN, no infinity; E5M2: exponent all ones is inf (mantissa 0) or NaN
    e4 = decode(np.arange(256), "e4m3")
    assert np.flatnonzero(np.isnan(e4)).tolist() == [0x7F, 0xFF] and not np.isinf(e4).any()
    e5 = decode(np.arange(256), "e5m2")
    assert np.flatnonzero(np.isinf(e5)).tolist() == [0x7C, 0xFC]
    assert np.flatnonzero(np.isnan(e5)).tolist() == [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF]
    assert FORMATS["e4m3"].max_finite == 448.0 and FORMATS["e5m2"].max_finite == 57344.0
    assert encode(np.array([np.nan, np.inf, 1e6]), "e4m3").tolist() == [0x7F, 0x7F, 0x7F]
    assert encode(np.array([np.nan, np.inf, -np.inf, 1e6]), "e5m2").tolist() == [0x7F, 0x7C, 0xFC, 0x7C]


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_every_finite_code_round_trips(fmt: str) -> None:
    codes = np.arange(256)
    values = decode(codes, fmt)
    finite = np.isfinite(values)
    assert np.array_equal(encode(values[finite], fmt), codes[finite].astype(np.uint8))
    positive = values[(codes < 0x80) & finite]
    assert np.all(np.diff(positive) > 0), "codes 0x00 up must rise"


def test_rounds_to_nearest_even() -> None:
    # E4M3 at 1: spacing 1/8; halfway cases go to the even mantissa
    assert decode(encode(np.array([1.0625, 1.1875, 1.05, 1.07]), "e4m3"), "e4m3").tolist() == [1.0, 1.25, 1.0, 1.125]
    # E5M2 at 1: spacing 1/4; below the smallest subnormal's half: 0
    assert decode(encode(np.array([1.125, 1.375, 2.0**-18]), "e5m2"), "e5m2").tolist() == [1.0, 1.5, 0.0]


def test_small_integers_are_exact() -> None:
    for fmt in FORMATS:
        v = np.arange(-16, 17) if fmt == "e4m3" else np.arange(-8, 9)
        assert np.array_equal(decode(encode(v, fmt), fmt), v)


def test_unknown_format_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^unknown FP8 format 'e3m4': one of e4m3, e5m2$"):
        encode(np.array([1.0]), "e3m4")
