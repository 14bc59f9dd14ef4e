"""The FMA-chain references: bounded for every F the suites use, equal to a scalar re-derivation,
and counted as docs/design/measurement.md, "Counting FLOPs and bytes", says."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apple_roofline.suites.base import check_close, check_tiled, pattern, tiled_within
from apple_roofline.suites.fma import CHAIN_A, FMA_KERNELS, tolerance


def _scalar_fma(x: float, y: float, z: float, t: type) -> float:
    return float(t(float(x) * float(y) + float(z)))  # exact product in float64, one rounding to t


@pytest.mark.parametrize("name", sorted(FMA_KERNELS))
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "fp64"])
def test_bounded_for_every_F(name: str, dtype: str) -> None:
    """No inf, NaN or denormal for F up to 1024 over the whole input range (docs/design/measurement.md,
    "Counting FLOPs and bytes")."""
    fk = FMA_KERNELS[name]
    x = pattern(dtype, -0.5, 0.5, seed=7)
    tiny = float(np.finfo({"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}[dtype]).tiny)
    for F in (1, 2, 16, 512, 1024):
        out = fk.reference(x, F, dtype).astype(np.float64)
        assert np.all(np.isfinite(out)), (name, dtype, F)
        assert np.max(np.abs(out)) < 2 * max(fk.chains, 4)
        nz = np.abs(out[out != 0])
        assert nz.size == 0 or nz.min() >= tiny, f"denormal output for {name}/{dtype} at F={F}"


def test_cross4_matches_scalar_derivation() -> None:
    t = np.float32
    for x in (-0.5, -0.1234, 0.0, 0.3, 0.49):
        c = e = float(t(x))
        d = f = -1.0
        for _ in range(37):
            c = _scalar_fma(c, d, e, t)
            d = _scalar_fma(d, e, f, t)
            e = _scalar_fma(e, f, c, t)
            f = _scalar_fma(f, c, d, t)
        want = float(t(float(t(float(t(c + d)) + e)) + f))
        got = FMA_KERNELS["vec4_cross4"].reference(np.array([x], np.float32), 37, "fp32")[0]
        assert got == want


def test_indep_matches_scalar_derivation() -> None:
    t = np.float32
    for x in (-0.5, 0.0, 0.2):
        cs = [float(t(float(t(x)) + k * 0.0625)) for k in range(8)]
        for _ in range(9):
            cs = [_scalar_fma(c, c, CHAIN_A, t) for c in cs]
        s = cs[0]
        for c in cs[1:]:
            s = float(t(s + c))
        assert FMA_KERNELS["vec4_indep8"].reference(np.array([x], np.float32), 9, "fp32")[0] == s
        c = float(t(x))
        for _ in range(9):
            c = _scalar_fma(c, c, CHAIN_A, t)
        assert FMA_KERNELS["scalar_indep8"].reference(np.array([x], np.float32), 9, "fp32")[0] == c


def test_counting_follows_design() -> None:
    """Per work item: vec4 32·F FLOPs / 32 B, scalar8 16·F FLOPs / 64 B (fp32; per-lane counting)."""
    v, s = FMA_KERNELS["vec4_cross4"], FMA_KERNELS["scalar_indep8"]
    assert v.flops_per_item(10) == 320 and v.bytes_per_item("fp32") == 32
    assert s.flops_per_item(10) == 160 and s.bytes_per_item("fp32") == 64
    assert FMA_KERNELS["vec4_indep8"].flops_per_item(1) == 64
    assert FMA_KERNELS["scalar_indep32"].bytes_per_item("fp16") == 128
    # arithmetic intensity: vec4 = F, scalar8 = F/4 FLOP/B
    assert v.flops_per_item(8) / v.bytes_per_item("fp32") == 8
    assert s.flops_per_item(8) / s.bytes_per_item("fp32") == 2


def test_check_tiled_catches_a_single_wrong_element() -> None:
    ref = FMA_KERNELS["scalar_indep8"].reference(pattern("fp32", -0.5, 0.5, 7), 5, "fp32")
    out = np.resize(ref, 3 * len(ref) + 11).copy()
    rtol, atol = tolerance("fp32")
    assert check_tiled(out, ref, rtol, atol)[0]
    out[len(ref) + 3] *= 1.01
    ok, msg = check_tiled(out, ref, rtol, atol)
    assert not ok and "1 of" in msg
    out[:] = np.nan
    assert not check_tiled(out, ref, rtol, atol)[0]


def test_check_close_counts_what_it_finds_and_check_tiled_adds_the_counts_up() -> None:
    """check_close's result is structured (bad, first, worst); check_tiled sums the bad elements of
    its chunks from it, so bad elements in several chunks are counted, not read back from a message."""
    want = np.linspace(1.0, 2.0, 64, dtype=np.float32)
    got = want.copy()
    got[[5, 40]] *= 1.5
    result = check_close(got, want, 1e-6, 0.0)
    assert not result.ok and (result.total, result.bad, result.first) == (64, 2, 5)
    assert result.worst > 1e5 and result.message.startswith("2 of 64 elements wrong; first at 5")
    fine = check_close(want, want, 1e-6, 0.0)
    assert fine.ok and fine.bad == 0 and fine.first == -1 and fine.worst == 0.0
    ref = np.arange(1, 9, dtype=np.float32)
    tiled = np.resize(ref, 8 * 40)
    tiled[[3, 100, 250, 251]] = -1.0  # four bad elements in three chunks of 64
    ok, msg = check_tiled(tiled, ref, 1e-6, 0.0, chunk=64)
    assert not ok and msg.startswith("4 of 320 elements differ from the NumPy reference; chunk at 0: 1 of 64")


def test_tolerance_scales_with_epsilon() -> None:
    r32, _ = tolerance("fp32")
    r16, _ = tolerance("fp16")
    r64, _ = tolerance("fp64")
    assert r64 < r32 < r16 < 0.05
    assert math.isclose(r32 / np.finfo(np.float32).eps, 128)


@pytest.mark.parametrize("name", sorted(FMA_KERNELS))
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "fp64"])
def test_validation_tells_the_iteration_count(name: str, dtype: str) -> None:
    """A kernel that ran F/16 iterations instead of F must fail validation (and, above half
    precision, one that ran F/2 or F-2), so a peak cannot be overstated by skipping FMAs."""
    fk = FMA_KERNELS[name]
    x = pattern(dtype, -0.5, 0.5, seed=7)
    rtol, atol = tolerance(dtype)
    want = fk.reference(x, 512, dtype)
    short = [32] if dtype == "fp16" else [32, 256, 510]
    for F in short:
        ok, _ = check_tiled(fk.reference(x, F, dtype), want, rtol, atol)
        assert not ok, f"{name}/{dtype}: F={F} passes as F=512"


def test_fp64_reference_is_fused() -> None:
    """The fp64 reference rounds x·y + z once (checked against exact rational arithmetic)."""
    from fractions import Fraction

    from apple_roofline.suites.fma import _fma64

    rng = np.random.default_rng(3)
    x, y, z = (rng.uniform(-1, 1, 2000) for _ in range(3))
    got = _fma64(x, y, z)
    exact = [float(Fraction(a) * Fraction(b) + Fraction(c)) for a, b, c in zip(x, y, z)]
    assert np.count_nonzero(got != np.array(exact)) <= 2  # correctly rounded, up to rare double rounding


def test_stream_ceiling_is_dram_only_beyond_four_times_the_llc() -> None:
    from apple_roofline.suites.stream.suite import bandwidth_class

    assert bandwidth_class(128 << 20, 32 << 20) == "DRAM bandwidth"
    assert bandwidth_class(64 << 20, 32 << 20) == "Cache bandwidth"
    assert (
        bandwidth_class(4096, 0) == "DRAM bandwidth"
    )  # cache size unknown: as docs/design/measurement.md, "Measurement", sizes it


@settings(max_examples=200, deadline=None)
@given(
    dtype=st.sampled_from(["fp16", "fp32", "fp64"]),
    period=st.integers(1, 37),
    rows=st.integers(0, 9),
    tail=st.integers(0, 36),
    seed=st.integers(0, 2**32 - 1),
    wrong=st.sampled_from(["none", "scale", "nan", "inf", "sign"]),
)
def test_tiled_within_decides_as_check_close(
    dtype: str, period: int, rows: int, tail: int, seed: int, wrong: str
) -> None:
    """The column-extremes test decides exactly as the elementwise check_close over the tiled
    reference, for any size (whole periods and a tail), dtype and kind of wrong element."""
    rng = np.random.default_rng(seed)
    ref = pattern(dtype, -2.0, 2.0, seed % 1000, period)
    n = rows * period + min(tail, period - 1)
    if n == 0:
        return
    got = np.resize(ref, n).copy()
    rtol, atol = tolerance(dtype)
    i = int(rng.integers(n))
    if wrong == "scale":  # just inside or just outside the bound, or far out
        got[i] = got[i] * (1 + float(rng.choice([0.5, 1.0, 2.0, 100.0])) * rtol) + float(rng.choice([0.0, atol]))
    elif wrong == "nan":
        got[i] = np.nan
    elif wrong == "inf":
        got[i] = np.inf
    elif wrong == "sign":
        got[i] = -got[i]
    want = np.resize(ref, n)
    assert tiled_within(got, ref, rtol, atol) == check_close(got, want, rtol, atol).ok
    assert check_tiled(got, ref, rtol, atol)[0] == check_close(got, want, rtol, atol).ok
