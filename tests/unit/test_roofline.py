from __future__ import annotations

import math
from typing import List

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from apple_roofline.roofline import COMPUTE_BOUND, MEMORY_BOUND, Point, Roofline, derive_ceilings
from apple_roofline.roofline.model.run import Run
from apple_roofline.study.records import Ceiling, Measurement


def bw(v: float, name: str = "DRAM bandwidth", source: str = "measured") -> Ceiling:
    return Ceiling(name, "bandwidth", v, "GB/s", source, "test")


def fl(v: float, name: str = "FP32", source: str = "measured") -> Ceiling:
    return Ceiling(name, "compute", v, "GFLOP/s", source, "test")


# --- Point ------------------------------------------------------------------------


def test_point_values() -> None:
    p = Point("axpy", flops=2e9, bytes=12e9, seconds=0.1)
    assert p.intensity == pytest.approx(1 / 6)
    assert p.gflops == pytest.approx(20.0)
    assert p.gbps == pytest.approx(120.0)


@pytest.mark.parametrize(
    "flops, nbytes, seconds, fragment",
    [
        (-1.0, 1.0, 1.0, "flops"),
        (1.0, 0.0, 1.0, "bytes"),
        (1.0, -5.0, 1.0, "bytes"),
        (1.0, 1.0, 0.0, "seconds"),
        (float("nan"), 1.0, 1.0, "finite"),
        (1.0, float("inf"), 1.0, "finite"),
        (1.0, 1.0, float("inf"), "finite"),
    ],
)
def test_point_rejects(flops: float, nbytes: float, seconds: float, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Point("p", flops, nbytes, seconds)


def test_point_from_measurement(m5_run: Run) -> None:
    m = m5_run.measurements[3]
    p = Point.from_measurement(m)
    assert p.name == m.label
    assert p.gflops == pytest.approx(m.gflops)
    assert p.intensity == pytest.approx(m.intensity)


# --- derive_ceilings ---------------------------------------------------------------


def test_derive_ceilings_from_synthetic_m5(m5_run: Run) -> None:
    cs = derive_ceilings(m5_run.measurements)
    by_name = {c.name: c for c in cs}
    assert set(by_name) == {
        "DRAM bandwidth",
        "FP32 vector",
        "FP32 scalar ILP",
        "FP16 vector",
        "FP16 scalar ILP",
        "GEMM FP32",
    }
    assert cs[0].kind == "bandwidth"
    assert by_name["DRAM bandwidth"].value == pytest.approx(122.0)
    assert by_name["DRAM bandwidth"].unit == "GB/s"
    assert by_name["DRAM bandwidth"].from_ == "stream/triad/fp32 n=67108864 (median of 10)"
    # the invalid 9999 GFLOP/s vec4_indep8 is never a ceiling
    assert by_name["FP32 vector"].value == pytest.approx(815.0)
    assert by_name["FP32 scalar ILP"].value == pytest.approx(3849.0)
    assert by_name["FP32 scalar ILP"].from_.startswith("peak/scalar_indep8/fp32")
    assert by_name["GEMM FP32"].value == pytest.approx(1790.0)
    assert all(c.source == "measured" for c in cs)
    compute = [c.value for c in cs if c.kind == "compute"]
    assert compute == sorted(compute, reverse=True)


def test_derive_ceilings_ignores_invalid_and_unclassed(make_m) -> None:  # type: ignore[no-untyped-def]
    ms: List[Measurement] = [
        make_m(
            "peak",
            "a",
            "fp32",
            flops=10**9,
            bytes=10**6,
            gflops=500.0,
            ceiling_class="FP32",
            ceiling_kind="compute",
            valid=False,
        ),
        make_m("sweep", "b", "fp32", flops=10**9, bytes=10**6, gflops=900.0),
    ]
    assert derive_ceilings(ms) == []
    assert derive_ceilings([]) == []


def test_derive_ceilings_uses_median_not_best(make_m) -> None:  # type: ignore[no-untyped-def]
    m = make_m(
        "stream",
        "copy",
        "fp32",
        flops=0,
        bytes=8 * 10**8,
        gbps=100.0,
        noisy=True,
        ceiling_class="DRAM bandwidth",
        ceiling_kind="bandwidth",
    )
    (c,) = derive_ceilings([m])
    assert c.value == pytest.approx(100.0)
    assert m.best_gbps > 100.0


def test_derive_ceilings_rejects_mixed_kinds(make_m) -> None:  # type: ignore[no-untyped-def]
    a = make_m("x", "a", "fp32", flops=10, bytes=10, gbps=1.0, ceiling_class="C", ceiling_kind="bandwidth")
    b = make_m("x", "b", "fp32", flops=10, bytes=10, gbps=1.0, ceiling_class="C", ceiling_kind="compute")
    with pytest.raises(ValueError, match="both"):
        derive_ceilings([a, b])


# --- Roofline: hand-computed values and the M5 article's summary table -------------


def test_constructor_requires_both_kinds() -> None:
    with pytest.raises(ValueError, match="bandwidth"):
        Roofline([fl(100.0)])
    with pytest.raises(ValueError, match="compute"):
        Roofline([bw(100.0)])
    with pytest.raises(ValueError):
        Roofline([])


def test_article_summary_table_ridge_points() -> None:
    # M5 GPU roofline analysis, summary table
    r = Roofline([bw(126.0), fl(815.0, "FP32 vector")])
    assert r.ridge_point() == pytest.approx(6.468, abs=1e-3)
    assert round(r.ridge_point(), 1) == 6.5
    r2 = Roofline([bw(122.0), fl(815.0, "FP32 vector"), fl(3849.0, "FP32 scalar ILP"), fl(6004.0, "FP16 scalar ILP")])
    assert r2.ridge_point("FP32 scalar ILP") == pytest.approx(31.55, abs=0.01)  # ~31 F/B
    assert r2.ridge_point("FP16 scalar ILP") == pytest.approx(49.2, abs=0.05)  # ~49 F/B
    assert r2.ridge_point("FP32 vector") == pytest.approx(815 / 122)
    assert r2.ridge_points() == pytest.approx(
        {"FP16 scalar ILP": 6004 / 122, "FP32 scalar ILP": 3849 / 122, "FP32 vector": 815 / 122}
    )
    assert list(r2.ridge_points()) == ["FP16 scalar ILP", "FP32 scalar ILP", "FP32 vector"]


def test_lookup_and_defaults() -> None:
    r = Roofline(
        [
            bw(100.0),
            bw(120.0, "L2"),
            fl(500.0, "a"),
            fl(2000.0, "b"),
            bw(150.0, source="theoretical"),
            fl(4000.0, "b", "theoretical"),
        ]
    )
    assert r.bandwidth().value == 120.0
    assert r.bandwidth("theoretical").value == 150.0
    assert [c.value for c in r.compute()] == [2000.0, 500.0]
    assert r.peak().name == "b" and r.peak().value == 2000.0
    assert r.peak("theoretical").value == 4000.0
    assert r.ridge_point() == pytest.approx(2000 / 120)
    # by name: measured first
    assert r.ridge_point("b") == pytest.approx(2000 / 120)
    # a theoretical Ceiling uses the theoretical bandwidth
    assert r.ridge_point(r.peak("theoretical")) == pytest.approx(4000 / 150)
    assert r.ridge_point("a", "DRAM bandwidth") == pytest.approx(500 / 100)
    assert r.ridge_points("theoretical") == {"b": pytest.approx(4000 / 150)}
    with pytest.raises(LookupError, match="nope"):
        r.ridge_point("nope")
    with pytest.raises(ValueError, match="compute"):
        r.ridge_point(bw(1.0))
    with pytest.raises(ValueError, match="source"):
        r.bandwidth("guessed")


def test_missing_source_raises_lookup_error() -> None:
    r = Roofline([bw(100.0), fl(500.0)])
    with pytest.raises(LookupError, match="theoretical bandwidth"):
        r.bandwidth("theoretical")
    with pytest.raises(LookupError, match="theoretical compute"):
        r.peak("theoretical")
    with pytest.raises(LookupError):
        r.ridge_points("theoretical")
    assert r.compute("theoretical") == []


def test_falls_back_to_theoretical_when_nothing_measured() -> None:
    r = Roofline([bw(200.0, source="theoretical"), fl(1000.0, source="theoretical")])
    assert r.ridge_point() == pytest.approx(5.0)
    assert r.attainable(1.0) == pytest.approx(200.0)


def test_attainable_hand_computed() -> None:
    r = Roofline([bw(122.0), fl(815.0)])
    assert r.attainable(1.0) == pytest.approx(122.0)
    assert r.attainable(0.25) == pytest.approx(30.5)
    assert r.attainable(100.0) == 815.0
    assert isinstance(r.attainable(2.0), float)
    arr = r.attainable(np.array([0.5, 1.0, 10.0]))
    assert isinstance(arr, np.ndarray)
    np.testing.assert_allclose(arr, [61.0, 122.0, 815.0])
    np.testing.assert_allclose(r.attainable([[1.0], [2.0]]), [[122.0], [244.0]])
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="intensity"):
            r.attainable(bad)
    with pytest.raises(ValueError):
        r.attainable(np.array([1.0, 0.0]))


def test_classify_and_efficiency_hand_computed() -> None:
    r = Roofline([bw(122.0), fl(815.0, "FP32 vector"), fl(3849.0, "FP32 scalar ILP")])
    # STREAM triad: 2 FLOPs / 12 bytes at 122 GB/s -> 20.33 GFLOP/s, exactly on the roof
    triad = Point("triad", flops=2 * 10**8, bytes=12 * 10**8, seconds=12 * 10**8 / 122e9)
    assert r.classify(triad) == MEMORY_BOUND
    assert r.efficiency(triad) == pytest.approx(1.0)
    # AI 16 FLOP/B: compute-bound under float4 (ridge 6.7) but memory-bound under scalar ILP (ridge 31.5)
    p = Point("k", flops=16e9, bytes=1e9, seconds=16e9 / 400e9)  # 400 GFLOP/s
    assert r.classify(p, "FP32 vector") == COMPUTE_BOUND
    assert r.classify(p, "FP32 scalar ILP") == MEMORY_BOUND
    assert r.classify(p) == MEMORY_BOUND  # default = peak = scalar ILP
    assert r.efficiency(p, "FP32 vector") == pytest.approx(400 / 815)
    assert r.efficiency(p) == pytest.approx(400 / (122 * 16))
    with pytest.raises(ValueError):
        r.efficiency(Point("nothing", 0.0, 1.0, 1.0))


def test_from_run(m5_run: Run) -> None:
    r = Roofline.from_run(m5_run)
    assert r.bandwidth().value == pytest.approx(122.0)
    assert r.peak().value == pytest.approx(6004.0)
    assert r.ridge_point("FP32 scalar ILP") == pytest.approx(3849 / 122)
    assert r.bandwidth("theoretical").value == 153.6


# --- properties --------------------------------------------------------------------

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
ai_st = st.floats(min_value=1e-4, max_value=1e5, allow_nan=False, allow_infinity=False)


@given(pos, pos, ai_st, ai_st)
def test_attainable_monotone_and_bounded(b: float, p: float, x: float, y: float) -> None:
    r = Roofline([bw(b), fl(p)])
    lo, hi = min(x, y), max(x, y)
    a_lo, a_hi = r.attainable(lo), r.attainable(hi)
    assert a_lo <= a_hi
    for ai, a in ((lo, a_lo), (hi, a_hi)):
        assert a <= p
        assert a <= b * ai * (1 + 1e-12)
        assert a == pytest.approx(min(p, b * ai))


@given(pos, pos, st.floats(min_value=1.0, max_value=1e3))
def test_attainable_is_compute_at_and_beyond_ridge(b: float, p: float, k: float) -> None:
    r = Roofline([bw(b), fl(p)])
    ridge = r.ridge_point()
    assert r.attainable(ridge) == pytest.approx(p, rel=1e-12)
    assert r.attainable(ridge * k) == p


@given(pos, pos, ai_st)
def test_classify_consistent_with_ridge(b: float, p: float, ai: float) -> None:
    r = Roofline([bw(b), fl(p)])
    point = Point("x", flops=ai * 1e9, bytes=1e9, seconds=1.0)
    assume(not math.isclose(point.intensity, r.ridge_point(), rel_tol=1e-9))
    expected = MEMORY_BOUND if point.intensity < r.ridge_point() else COMPUTE_BOUND
    assert r.classify(point) == expected
    assert (r.classify(point) == MEMORY_BOUND) == (r.attainable(point.intensity) < p)


@given(pos, pos, ai_st, st.floats(min_value=1e-6, max_value=1.0))
def test_efficiency_at_most_one_under_roof(b: float, p: float, ai: float, frac: float) -> None:
    r = Roofline([bw(b), fl(p)])
    gflops = r.attainable(ai) * frac  # on (frac == 1) or under the roof
    point = Point("x", flops=ai * 1e9, bytes=1e9, seconds=ai / gflops)
    eff = r.efficiency(point)
    assert eff <= 1.0 + 1e-9
    assert eff == pytest.approx(frac, rel=1e-9)
