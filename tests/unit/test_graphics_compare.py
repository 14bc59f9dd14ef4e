"""The float32 target comparison decides every value as the float64 one does (graphics/compare.py):
random images, values placed just inside and just outside their bound, NaN, infinities, zero and
subnormal bounds, and each storage dtype."""

from __future__ import annotations

from typing import Tuple

import numpy as np
import pytest

from apple_roofline.graphics.compare import MARGIN, beyond_bound


def float64_verdict(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Tuple[np.ndarray, float]:
    """The comparison as check_target made it before: everything in float64."""
    with np.errstate(invalid="ignore", over="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        bound = atol + rtol * np.abs(w)
        err = np.abs(g - w)
        return ~(err <= bound), float(np.max(err / np.maximum(bound, 1e-300))) if err.size else 0.0


def edge_images(rng: np.random.Generator, rtol: float, atol: float) -> Tuple[np.ndarray, np.ndarray]:
    """A reference and a target whose errors sit at, just under and just over the bound (the float32
    neighbours of the exact bound), beside ordinary values."""
    want = (rng.standard_normal(4096) * 10.0 ** rng.integers(-3, 4, 4096)).astype(np.float32)
    bound = atol + rtol * np.abs(want.astype(np.float64))
    edge = (want.astype(np.float64) + bound * rng.choice([-1.0, 1.0], 4096)).astype(np.float32)
    step = rng.integers(-2, 3, 4096)  # a few float32 steps either side of the bound
    got = edge.copy()
    for k in (-2, -1, 1, 2):
        sel = step == k
        got[sel] = np.nextafter(edge[sel], np.float32(np.sign(k) * np.inf))
    noise = rng.random(4096) < 0.3
    got[noise] = (want[noise] + rng.standard_normal(int(noise.sum())).astype(np.float32) * 1e-6).astype(np.float32)
    return got, want


@pytest.mark.parametrize(
    "rtol, atol", [(16 * 4 * 2.0**-23, 0.0), (16 * 4 * 2.0**-23, 16 / 255), (0.0, 1.0), (1e-3, 0.0)]
)
def test_the_same_verdict_as_float64_at_the_bound(rtol: float, atol: float) -> None:
    rng = np.random.default_rng(11)
    got, want = edge_images(rng, rtol, atol)
    bad, worst = beyond_bound(got, want, rtol, atol)
    bad64, worst64 = float64_verdict(got, want, rtol, atol)
    assert np.array_equal(bad, bad64) and 0 < bad.sum() < bad.size  # some of each: the test can fail
    assert worst == pytest.approx(worst64, rel=1e-5)


def test_errors_at_the_bound_itself_are_decided_in_float64() -> None:
    want = np.linspace(-100.0, 100.0, 2001, dtype=np.float32)
    at = want + np.float32(0.5)  # exactly the bound: within it
    past = np.nextafter(at, np.float32(np.inf))  # one float32 step past it
    err = np.abs(at.astype(np.float64) - want.astype(np.float64))
    assert (np.abs(err / 0.5 - 1.0) < MARGIN).sum() > 1000  # float32's margin cannot decide these
    bad, worst = beyond_bound(at, want, 0.0, 0.5)
    bad64, worst64 = float64_verdict(at, want, 0.0, 0.5)
    assert np.array_equal(bad, bad64) and worst == pytest.approx(worst64, rel=1e-6)
    bad, _ = beyond_bound(past, want, 0.0, 0.5)
    assert np.array_equal(bad, float64_verdict(past, want, 0.0, 0.5)[0]) and bad.sum() > 1000


def test_nan_infinity_zero_and_subnormal_bounds() -> None:
    tiny = np.float32(1e-40)  # subnormal in float32
    want = np.array([1.0, 1.0, np.inf, 0.0, 0.0, tiny, tiny, -np.inf, 3e38], dtype=np.float32)
    got = np.array([np.nan, np.inf, np.inf, 0.0, tiny, tiny, 2 * tiny, np.inf, -3e38], dtype=np.float32)
    for rtol, atol in ((1e-6, 0.0), (0.0, 0.0), (0.5, 0.0)):
        bad, _ = beyond_bound(got, want, rtol, atol)
        assert np.array_equal(bad, float64_verdict(got, want, rtol, atol)[0]), (rtol, atol)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64])
def test_every_storage_dtype(dtype: type) -> None:
    rng = np.random.default_rng(3)
    want = (rng.random((16, 8, 4)) * 200).astype(dtype)
    got = want.copy()
    got[0, 0, 0] += 2  # off by 2: beyond a bound of 1, the rest within
    got[1, 1, 1] += 1
    bad, worst = beyond_bound(got, want, 0.0, 1.0)
    bad64, worst64 = float64_verdict(got, want, 0.0, 1.0)
    assert np.array_equal(bad, bad64) and bad.sum() == 1 and bad[0, 0, 0]
    assert worst == pytest.approx(worst64) == 2.0
    ok, worst = beyond_bound(want, want, 0.0, 0.0)
    assert not ok.any() and worst == 0.0
