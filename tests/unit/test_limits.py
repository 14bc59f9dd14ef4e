"""Physical limits (docs/design/limits.md, "Physical limits"): a figure above the limit of what it is labelled
with, at the clock it ran at, sets no ceiling and no level and is flagged in the results, the report
and the figures; no table shows more than 100 % of anything."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest

from apple_roofline.devices import DeviceSpec
from apple_roofline.roofline import Ceiling, Measurement, Run, derive_ceilings
from apple_roofline.roofline.model.limits import CLOCK_MISREAD, TOLERANCE, Limits, check_limits, share_text
from apple_roofline.roofline.run import runner
from apple_roofline.roofline.run.options import RunOptions
from apple_roofline.roofline.views.html import to_html
from apple_roofline.roofline.views.plot import plot_roofline
from apple_roofline.roofline.views.report import to_csv, to_markdown
from apple_roofline.study import ToolInfo
from apple_roofline.study.files import ResultsError
from apple_roofline.study.records import OverLimit
from apple_roofline.suites.hierarchy.levels import level_ceilings, level_curves
from apple_roofline.suites.hierarchy.plot import plot_hierarchy
from apple_roofline.suites.hierarchy.table import hierarchy_table
from apple_roofline.suites.matrix.table import matrix_shapes_table, matrix_summary_table
from test_tuning import FakeBackend, fake  # noqa: F401 (the fixture) — tests/unit, on the path as every test's folder is

DATA = Path(__file__).resolve().parent / "data"
MiB = 1 << 20
#: An H200's HBM3e interface: 2 x 3201 MHz x 6016 bit / 8 (theoretical/cuda.py).
H200_DRAM = 4814.0
H200_MHZ = 1980.0
H200_BF16 = 1_070_531.0  # GEMM BF16 at 1980 MHz, the H100/H200 tensor rate
_SAMPLE_S = 0.02  # every synthetic sample lasts 20 ms, as the recorded H100 runs' do


def _timed(rate: float, per_launch: float, n: int = 5) -> Tuple[Tuple[float, ...], int]:
    """Samples (s per launch) giving exactly ``rate`` (units per s) for ``per_launch`` units, and the
    batch that makes each sample last :data:`_SAMPLE_S`."""
    t = per_launch / rate
    return (t,) * n, max(1, round(_SAMPLE_S / t))


def _bandwidth(
    suite: str, kernel: str, gbps: float, nbytes: int, *, cls: Optional[str] = None, **params: Any
) -> Measurement:
    samples, batch = _timed(gbps * 1e9, nbytes)
    flops = nbytes // 6 if kernel == "triad" else 0
    return Measurement(
        suite,
        kernel,
        "fp32" if suite == "stream" else "u32x4",
        dict(params),
        flops,
        nbytes,
        samples,
        True,
        cls,
        "bandwidth" if cls else None,
        batch,
        "ok",
    )


def _compute(suite: str, kernel: str, dtype: str, cls: str, gflops: float, **params: Any) -> Measurement:
    ops = 10**12
    samples, batch = _timed(gflops * 1e9, ops)
    return Measurement(suite, kernel, dtype, dict(params), ops, 10**6, samples, True, cls, "compute", batch, "ok")


def _hierarchy(kernel: str, ws: int, gbps: float, level: str, level_bytes: int) -> Measurement:
    return _bandwidth(
        "hierarchy", kernel, gbps, 64 * ws, working_set_bytes=ws, level=level, level_bytes=level_bytes, sweep="levels"
    )


def _h200_run(measurements: List[Measurement]) -> Run:
    """An H200 run as the shared reader reads it: written, then read back (limits checked on reading)."""
    theoretical = (
        Ceiling("DRAM bandwidth", "bandwidth", H200_DRAM, "GB/s", "theoretical", "2 x 3201 MHz x 6016-bit / 8"),
        Ceiling("FP32 vector", "compute", 66_908.0, "GFLOP/s", "theoretical", "132 SMs x 128 x 2 x 1980 MHz"),
        Ceiling("GEMM BF16", "compute", H200_BF16, "GFLOP/s", "theoretical", "132 SMs x 4096 x 1980 MHz"),
    )
    run = Run(
        tool=ToolInfo("apple_roofline", "0.1.0", None),
        created="2026-11-27T12:00:00+00:00",
        host={"os": "Linux"},
        device={
            "backend": "cuda",
            "name": "NVIDIA H200",
            "clock_hz": 1_980_000_000,
            "theoretical": {"clock_hz": 1_980_000_000, "product_line": "other"},
        },
        command=("apple-roofline", "run"),
        measurements=tuple(measurements),
        ceilings=tuple(derive_ceilings(measurements)) + theoretical,
    )
    return Run.from_dict(json.loads(json.dumps(run.to_dict())), source="h200.json")


def _default_hierarchy() -> List[Measurement]:
    """The default run's hierarchy points on an H200 (issue 29): L2 (60 MiB) at C/4 and C/2, and DRAM
    at 240 MiB (still in L2: 5,130 GB/s) and 467 MiB (4,407 GB/s)."""
    l2 = 60 * MiB
    return [
        _hierarchy("read", 15 * MiB, 10_900.0, "L2", l2),
        _hierarchy("read", 30 * MiB, 10_700.0, "L2", l2),
        _hierarchy("read", 240 * MiB, 5_130.0, "DRAM", 0),
        _hierarchy("read", 467 * MiB, 4_407.0, "DRAM", 0),
    ]


def _percentages(text: str) -> List[float]:
    """Every percentage written in ``text`` ("97.3 %", "101%")."""
    return [float(x.replace(",", "")) for x in re.findall(r"(\d[\d,]*(?:\.\d+)?) ?%", text)]


# -- the check ---------------------------------------------------------------------------------------


def test_a_cache_inflated_dram_point_is_flagged_and_makes_no_level() -> None:
    run = _h200_run(
        [_bandwidth("stream", "triad", 4_300.0, 3 * 256 * MiB, cls="DRAM bandwidth", n=1), *_default_hierarchy()]
    )
    flagged = [m for m in run.measurements if m.over_limit is not None]
    assert [int(m.params["working_set_bytes"]) for m in flagged] == [240 * MiB]
    over = flagged[0].over_limit
    assert over is not None and over.reason == "cache-resident working set"
    assert over.figure == pytest.approx(5_130.0) and over.limit == H200_DRAM
    # the DRAM level is the point that agrees with the interface, not a mean with the inflated one (4,776)
    (curve,) = level_curves(run.measurements)
    dram = [p for p in curve.plateaus if p.level == "DRAM"]
    assert [p.gbps for p in dram] == [pytest.approx(4_407.0)]
    assert curve.over_limit == tuple(flagged)
    assert all(c.value <= H200_DRAM for c in level_ceilings(run.measurements) if "DRAM" in c.name)


def test_a_full_sweep_keeps_its_cache_resident_points_for_its_shape_but_not_its_levels() -> None:
    """In `--suite hierarchy`'s full sweep the working sets just beyond the L2 still hit it (the
    transition): they are flagged, stay on the curve so that the L2's edge is where it was, and are in
    no plateau; the DRAM plateau is made of the points within the interface."""
    l2 = 50 * MiB
    sizes = [int(4 * MiB * 2 ** (i / 4)) for i in range(0, 28)]  # 4 MiB to ~430 MiB, 4 per octave

    def rate(ws: int) -> float:
        # the L2's rate holds past its documented 50 MiB (an H100's edge was 76 MiB), then falls to DRAM's
        return 8_000.0 if ws <= 64 * MiB else 3_250.0 if ws >= 128 * MiB else 8_000.0 * (64 * MiB / ws) ** 1.3

    ms = [
        dataclasses.replace(
            _hierarchy("read", ws, rate(ws), "L2" if ws <= l2 else "DRAM", l2 if ws <= l2 else 0),
            params={
                "working_set_bytes": ws,
                "level": "L2" if ws <= l2 else "DRAM",
                "level_bytes": l2 if ws <= l2 else 0,
                "sweep": "full",
            },
        )
        for ws in sizes
    ]
    run = _h200_run(ms)
    (curve,) = level_curves(run.measurements)
    over = [int(m.params["working_set_bytes"]) for m in curve.over_limit]
    assert over and all(l2 < ws < 128 * MiB for ws in over)
    assert len(curve.points) == len(sizes)
    (unchecked,) = level_curves([dataclasses.replace(m, over_limit=None) for m in run.measurements])
    (l2_level,) = [p for p in curve.plateaus if p.level == "L2"]
    (l2_unchecked,) = [p for p in unchecked.plateaus if p.level == "L2"]
    assert l2_level.edge == l2_unchecked.edge and l2_unchecked.hi > l2_level.hi  # the same edge, fewer points
    assert l2_level.points < l2_unchecked.points
    (dram,) = [p for p in curve.plateaus if p.level == "DRAM"]
    assert dram.gbps == pytest.approx(3_250.0) and dram.lo >= min(over)
    for p in curve.plateaus:
        assert not [ws for ws in over if p.lo <= ws <= p.hi], p


def test_a_stream_figure_above_the_interface_sets_no_ceiling() -> None:
    ms = [
        _bandwidth("stream", "copy", 4_300.0, 2 * 256 * MiB, cls="DRAM bandwidth", n=1),
        _bandwidth("stream", "triad", 5_000.0, 3 * 256 * MiB, cls="DRAM bandwidth", n=1),
    ]
    run = _h200_run(ms)
    triad = next(m for m in run.measurements if m.kernel == "triad")
    assert triad.over_limit is not None and triad.over_limit.reason == "cache-resident working set"
    (dram,) = [c for c in run.ceilings if c.source == "measured" and c.name == "DRAM bandwidth"]
    assert dram.value == pytest.approx(4_300.0) and dram.from_.startswith("stream/copy/fp32")
    # STREAM's points are the bandwidth roof and not drawn; one above its limit is no roof, so it is drawn, flagged
    i = run.measurements.index(triad)
    gids = {line.get_gid() for line in plot_roofline(run.roofline()).axes[0].get_lines()}
    assert {f"m-{i}", f"over-limit:m-{i}"} <= gids and "m-0" not in gids


def test_a_clock_that_gives_101_percent_of_the_pipe_is_flagged_not_a_ceiling() -> None:
    mhz = 1_762.8  # the effective clock read on an H200 (issue 29)
    pipe = H200_BF16 * mhz / H200_MHZ
    ms = [
        _compute(
            "matrix",
            "wgmma_64x256x16",
            "bf16→fp32",
            "Matrix BF16→FP32 (wgmma)",
            1.01 * pipe,
            m=64,
            n=256,
            k=16,
            effective_clock_mhz=mhz,
            effective_clock_source="measured: probe",
        ),
        _compute(
            "peak", "vec4_indep8", "fp32", "FP32 vector", 1.01 * 66_908.0 * mhz / H200_MHZ, effective_clock_mhz=mhz
        ),
    ]
    run = _h200_run(ms)
    for m in run.measurements:
        assert m.over_limit is not None and m.over_limit.reason == "clock misread"
        assert m.over_limit.limit == pytest.approx((H200_BF16 if m.suite == "matrix" else 66_908.0) * mhz / H200_MHZ)
        assert "1,763 MHz" in m.over_limit.against
    assert not [c for c in run.ceilings if c.source == "measured"]


def test_within_the_tolerance_a_figure_is_at_its_limit() -> None:
    mhz = 1_800.0
    pipe = H200_BF16 * mhz / H200_MHZ
    run = _h200_run(
        [
            _compute(
                "matrix",
                "wgmma_64x256x16",
                "bf16→fp32",
                "Matrix BF16→FP32 (wgmma)",
                (1 + TOLERANCE / 2) * pipe,
                m=64,
                n=256,
                k=16,
                effective_clock_mhz=mhz,
            )
        ]
    )
    assert run.measurements[0].over_limit is None
    assert [c.name for c in run.ceilings if c.source == "measured"] == ["Matrix BF16→FP32 (wgmma)"]
    summary = matrix_summary_table(run)
    assert summary is not None and summary.rows[0][-1] == "100%"  # never 100.3 %


def test_short_samples_are_put_down_to_the_timer() -> None:
    ops = 10**9
    t = ops / (1.05 * 66_908.0e9)  # 15 µs launches, one per sample
    m = Measurement("peak", "vec4_indep8", "fp32", {}, ops, 10**6, (t,) * 3, True, "FP32 vector", "compute", 1, "ok")
    (checked,) = check_limits(
        [m],
        [Ceiling("FP32 vector", "compute", 66_908.0, "GFLOP/s", "theoretical", "spec")],
        {"theoretical": {"clock_hz": 1.98e9}},
    )
    assert checked.over_limit is not None and checked.over_limit.reason == "timer error"


def test_what_has_no_documented_peak_is_not_checked() -> None:
    """No constant is invented: a cache level, shared memory (without an NVIDIA GPU's SM count) and a
    CPU's DRAM (no theoretical bandwidth) are left unchecked, and a GeForce tile accumulating in FP16
    (twice the FP32-accumulation rate the GEMM FP16 peak is) has no limit."""
    theory = [
        Ceiling("GEMM FP16", "compute", 100_000.0, "GFLOP/s", "theoretical", "spec"),
        Ceiling("DRAM bandwidth", "bandwidth", 1_000.0, "GB/s", "theoretical", "spec"),
    ]
    fast_l2 = _hierarchy("read", 8 * MiB, 9_000.0, "L2", 60 * MiB)
    shared = _bandwidth(
        "hierarchy", "shared", 30_000.0, 64 * MiB, cls="Shared memory bandwidth", working_set_bytes=16384
    )
    fp16acc = _compute("matrix", "mma_16x8x16", "fp16→fp16", "Matrix FP16→FP16 (mma.sync)", 180_000.0)
    fp32acc = _compute("matrix", "mma_16x8x16", "fp16→fp32", "Matrix FP16→FP32 (mma.sync)", 180_000.0)
    geforce = {"theoretical": {"clock_hz": 2.52e9, "product_line": "GeForce"}}
    checked = check_limits([fast_l2, shared, fp16acc, fp32acc], theory, geforce)
    assert [m.over_limit is not None for m in checked] == [False, False, False, True]
    pro = check_limits([fp16acc], theory, {"theoretical": {"clock_hz": 2.52e9, "product_line": "other"}})
    assert pro[0].over_limit is not None
    cpu = check_limits(
        [_bandwidth("stream", "triad", 5_000.0, 3 * 256 * MiB, cls="DRAM bandwidth", n=1)],
        [c for c in theory if c.kind == "compute"],
        {},
    )
    assert cpu[0].over_limit is None


def test_shared_memory_and_l1_points_are_held_against_the_on_chip_data_path() -> None:
    """On an NVIDIA GPU shared memory and the hierarchy's L1 points are held against 128 B per clock
    per SM at the clock they ran at: an H100's L1 read at 33,893 GB/s at 1,980 MHz (a run on
    2026-11-27, kernel loaded from the on-disk cache) is 101.3 % of 128 B × 132 SMs × 1,980 MHz =
    33,454 GB/s and is flagged as a misread clock; the first run's 32,720 GB/s and shared memory's
    33,001 GB/s are within it; an L2 point is not checked."""
    h100 = {"backend": "cuda", "compute_units": 132, "theoretical": {"clock_hz": 1.98e9}}
    l1_over = _hierarchy("read", 128 * 1024, 33_893.0, "L1", 256 * 1024)
    l1_ok = _hierarchy("read", 128 * 1024, 32_720.0, "L1", 256 * 1024)
    shared = _bandwidth(
        "hierarchy", "shared", 33_001.0, 64 * MiB, cls="Shared memory bandwidth", working_set_bytes=16384
    )
    l2 = _hierarchy("read", 8 * MiB, 40_000.0, "L2", 50 * MiB)
    checked = check_limits([l1_over, l1_ok, shared, l2], [], h100)
    assert [m.over_limit is not None for m in checked] == [True, False, False, False]
    over = checked[0].over_limit
    assert over is not None and over.reason == "clock misread" and over.limit == pytest.approx(33_454.08)
    assert "128 B per clock per SM × 132 SMs at 1,980 MHz" in over.against
    assert " is above the on-chip data path (" in over.text and "the the" not in over.text
    slow = check_limits([dataclasses.replace(l1_ok, params={**l1_ok.params, "effective_clock_mhz": 1800.0})], [], h100)
    assert slow[0].over_limit is not None  # 32,720 GB/s is above the path at 1,800 MHz (30,413 GB/s)
    # the same point with its probe's reading in a run (2,065 MHz, above the 1,980 MHz maximum): within
    # the path at that clock (34,892 GB/s), as Nsight Compute's 96.4-96.7 % of the data stage says
    probed = dataclasses.replace(l1_over, params={**l1_over.params, "effective_clock_mhz": 2065.0})
    assert check_limits([probed], [], h100)[0].over_limit is None
    assert check_limits([l1_over], [], {"backend": "metal", "compute_units": 10})[0].over_limit is None


def test_a_clock_measured_above_the_devices_maximum_raises_the_limit_with_it() -> None:
    """An H100's SM runs above the 1,980 MHz its driver gives as the maximum, up to 2,083 MHz: on
    2026-11-28, after a tensor-core load, its probe read 1,995 MHz on 89 of 465 samples of an L1-bound
    kernel, which ran 0.72 % faster there, a DRAM-bound one no faster, and CUDA events kept the host's time
    (bench/README.md, "The device's timer against the host's"). So the limit is taken at the clock
    measured, above the maximum too, on every part; a figure above the pipe at that clock is still
    a misread clock."""
    theory = [Ceiling("FP32 vector", "compute", 66_908.0, "GFLOP/s", "theoretical", "spec")]
    fast = _compute("peak", "vec4_indep8", "fp32", "FP32 vector", 67_300.0, effective_clock_mhz=2010.0)
    h100 = {"backend": "cuda", "compute_units": 132, "theoretical": {"clock_hz": 1.98e9, "product_line": "other"}}
    (checked,) = check_limits([fast], theory, h100)
    assert checked.over_limit is None  # 67,300 < 66,908 x 2010/1980 = 67,922
    at = Limits.of(theory, h100).limit(fast)
    assert at is not None and at.mhz == 2010.0 and at.value == pytest.approx(66_908.0 * 2010 / 1980)
    assert "2,010 MHz, the clock it ran at" in at.against
    above = _compute("peak", "vec4_indep8", "fp32", "FP32 vector", 68_500.0, effective_clock_mhz=2010.0)
    over = check_limits([above], theory, h100)[0].over_limit
    assert over is not None and over.reason == "clock misread" and over.limit == pytest.approx(66_908.0 * 2010 / 1980)
    slow = _compute("peak", "vec4_indep8", "fp32", "FP32 vector", 60_000.0, effective_clock_mhz=1800.0)
    at = Limits.of(theory, h100).limit(slow)
    assert at is not None and at.mhz == 1800.0 and "1,800 MHz, the clock it ran at" in at.against


def test_a_clock_that_stepped_down_within_the_samples_is_held_at_its_highest_reading() -> None:
    """An H100's FP16→FP32 wgmma tile (2026-11-27): five samples at 983 TFLOP/s, then the GPU stepped
    its clock down and five ran at 855; its probed samples read 1,590–1,830 MHz, 1,671 on average.
    The median, 911 TFLOP/s, is above the pipe at the average but not at the highest reading, the
    clock the first samples ran at: no misread. Above the pipe at the highest reading it still is
    one, and a clock that held still keeps "the clock it ran at"."""
    theory = [Ceiling("GEMM FP16", "compute", H200_BF16, "GFLOP/s", "theoretical", "spec")]
    h100 = {"backend": "cuda", "compute_units": 132, "theoretical": {"clock_hz": 1.98e9, "product_line": "other"}}
    clock = dict(effective_clock_mhz=1671.4, effective_clock_min_mhz=1590.4, effective_clock_max_mhz=1830.3)
    at_top = H200_BF16 * 1830.3 / H200_MHZ

    def tile(gflops: float, **params: Any) -> Measurement:
        return _compute("matrix", "wgmma_64x128x64", "fp16→fp32", "Matrix FP16→FP32 (wgmma)", gflops, **params)

    stepped = tile(911_200.0, **clock)
    assert 911_200.0 > (1 + TOLERANCE) * H200_BF16 * 1671.4 / H200_MHZ  # above the pipe at the average
    lim = Limits.of(theory, h100).limit(stepped)
    assert lim is not None and lim.mhz == 1830.3 and lim.value == pytest.approx(at_top)
    assert "1,830 MHz, the highest clock read over its samples (1,590 to 1,830 MHz)" in lim.against
    assert check_limits([stepped], theory, h100)[0].over_limit is None
    (above,) = check_limits([tile(1.01 * at_top, **clock)], theory, h100)
    assert above.over_limit is not None and above.over_limit.reason == CLOCK_MISREAD
    held = tile(800_000.0, effective_clock_mhz=1671.4, effective_clock_min_mhz=1668.0, effective_clock_max_mhz=1675.0)
    lim = Limits.of(theory, h100).limit(held)
    assert lim is not None and lim.mhz == 1671.4 and "1,671 MHz, the clock it ran at" in lim.against


def test_limits_hold_the_pipe_at_the_clock_it_ran_at() -> None:
    limits = Limits.of(
        [Ceiling("FP32 vector", "compute", 66_908.0, "GFLOP/s", "theoretical", "spec")],
        {"theoretical": {"clock_hz": 1.98e9}},
    )
    at = limits.limit(_compute("peak", "vec4_indep8", "fp32", "FP32 vector", 1.0, effective_clock_mhz=990.0))
    assert at is not None and at.value == pytest.approx(33_454.0) and at.mhz == 990.0
    unclocked = limits.limit(_compute("peak", "vec4_indep8", "fp32", "FP32 vector", 1.0))
    assert unclocked is not None and unclocked.value == 66_908.0 and unclocked.mhz is None


def test_share_text_never_shows_more_than_100_percent() -> None:
    assert share_text(0.973, "clock misread") == "97.3 %"
    assert share_text(1 + TOLERANCE / 2, "clock misread") == "100 %"
    assert share_text(1.01, "clock misread") == "⚠ above: clock misread"
    assert share_text(1.01, "clock misread", whole=True) == "⚠ above: clock misread"
    assert share_text(0.6, "x", whole=True) == "60%"


# -- the results file ------------------------------------------------------------------------------------


def test_the_flag_is_written_and_derived_again_on_reading() -> None:
    run = _h200_run(_default_hierarchy())
    d = run.to_dict()
    written = [m["over_limit"] for m in d["measurements"] if "over_limit" in m]
    assert written == [
        {
            "figure": pytest.approx(5_130.0),
            "limit": H200_DRAM,
            "unit": "GB/s",
            "against": "theoretical DRAM bandwidth (the memory interface's peak)",
            "reason": "cache-resident working set",
        }
    ]
    # a stored flag is derived data: one on a point within its limit is dropped, a removed one comes back
    tampered = copy.deepcopy(d)
    tampered["measurements"][0]["over_limit"] = written[0]
    del tampered["measurements"][2]["over_limit"]
    again = Run.from_dict(tampered, source="t.json")
    assert [m.over_limit is not None for m in again.measurements] == [False, False, True, False]
    # a malformed one is refused by the strict reader, naming the field
    bad = copy.deepcopy(d)
    bad["measurements"][2]["over_limit"]["reason"] = "cosmic rays"
    with pytest.raises(ResultsError, match=r"measurements\[2\]\.over_limit: .*reason must be one of"):
        Run.from_dict(bad, source="t.json")


def test_over_limit_records_refuse_what_is_not_above() -> None:
    with pytest.raises(ValueError, match="not above its limit"):
        OverLimit(4_000.0, 4_814.0, "GB/s", "theoretical DRAM bandwidth", "cache-resident working set")


# -- the report and the figures ------------------------------------------------------------------------


def test_the_report_and_figures_show_the_flags() -> None:
    mhz = 1_762.8
    ms = [
        _bandwidth("stream", "triad", 4_300.0, 3 * 256 * MiB, cls="DRAM bandwidth", n=1),
        *_default_hierarchy(),
        _compute(
            "matrix",
            "wgmma_64x256x16",
            "bf16→fp32",
            "Matrix BF16→FP32 (wgmma)",
            1.01 * H200_BF16 * mhz / H200_MHZ,
            m=64,
            n=256,
            k=16,
            effective_clock_mhz=mhz,
            instruction="wgmma.mma_async.sync.aligned.m64n256k16",
            scope="1 warpgroup",
        ),
        _compute("peak", "vec4_indep8", "fp32", "FP32 vector", 55_000.0, effective_clock_mhz=mhz),
    ]
    run = _h200_run(ms)
    md = to_markdown(run)
    # a warning line for each, with its limit and reason
    assert re.search(
        r"hierarchy/read/u32x4 \(.*working_set_bytes=251658240.*\): 5,130 GB/s is above the theoretical "
        r"DRAM bandwidth .* 4,814 GB/s: cache-resident working set",
        md,
    )
    assert re.search(
        r"matrix/wgmma_64x256x16/bf16→fp32 .* is above the theoretical GEMM BF16 at 1,763 MHz.*: "
        r"clock misread .*sets no ceiling",
        md,
    )
    # the table cells: the hierarchy's point, the suite's rate, the matrix summary without a percentage
    hier = hierarchy_table(run)
    assert hier is not None
    assert [r[6] for r in hier.rows if "no level" in r[1]] == ["5,130 ⚠ cache-resident working set"]
    summary = matrix_summary_table(run)
    assert summary is not None
    (row,) = summary.rows
    assert row[0] == "Matrix BF16→FP32 (wgmma)" and "⚠ clock misread" in row[1]
    assert row[6] == "90%" and row[8] == "⚠ above: clock misread"  # of the peak at 1980 MHz; at its own clock, above
    shapes = matrix_shapes_table(run)
    assert shapes is not None and shapes.rows[0][7].endswith("⚠ clock misread")
    assert "| 5,130 ⚠ cache-resident working set |" in md.replace("GB/s", "")
    assert max(_percentages(md)) <= 100.0
    csv = to_csv(run)
    assert csv.count("cache-resident working set") == 1 and csv.count("clock misread") == 1
    # the figures: each flagged point drawn hollow under a cross, and the legend says so
    fig = plot_roofline(run.roofline())
    ax = fig.axes[0]
    gids = {line.get_gid() for line in ax.get_lines()}
    i = next(i for i, m in enumerate(run.measurements) if m.suite == "matrix")
    assert f"over-limit:m-{i}" in gids
    marker = next(line for line in ax.get_lines() if line.get_gid() == f"m-{i}")
    assert marker.get_markerfacecolor() == "white"
    legend = [t.get_text() for lg in [ax.get_legend(), *fig.legends] if lg is not None for t in lg.get_texts()]
    assert any("above its physical limit (1)" in t for t in legend)  # the hierarchy point is in its own figure
    hfig = plot_hierarchy(run.measurements, ceilings=run.ceilings)
    j = next(i for i, m in enumerate(run.measurements) if m.over_limit is not None and m.suite == "hierarchy")
    assert f"over-limit:m-{j}" in {line.get_gid() for line in hfig.axes[0].get_lines()}
    assert any("above its physical limit (1)" in t.get_text() for lg in hfig.legends for t in lg.get_texts())
    page = to_html(run)
    assert "⚠ 5,130 GB/s is above the theoretical DRAM bandwidth" in page


def test_a_recorded_h100_run_with_a_misread_clock_and_an_inflated_stream() -> None:
    """The recorded H100 run (tests/unit/data/run_h100_power.json) read with the best BF16 tile's clock
    read low enough to give 101 % of its pipe, and STREAM triad's samples shortened to 105 % of the
    interface: both flagged, neither a ceiling, and the report shows no share above 100 %."""
    d = json.loads((DATA / "run_h100_power.json").read_text(encoding="utf-8"))
    run = Run.from_dict(copy.deepcopy(d), source="run_h100_power.json")
    assert not [m for m in run.measurements if m.over_limit is not None]  # as recorded: all within
    bf16 = max(
        (i for i, m in enumerate(run.measurements) if m.ceiling_class and "BF16→FP32" in m.ceiling_class),
        key=lambda i: run.measurements[i].gflops,
    )
    theory = {c.name: c.value for c in run.ceilings if c.source == "theoretical"}
    gflops = run.measurements[bf16].gflops
    d["measurements"][bf16]["params"]["effective_clock_mhz"] = gflops / 1.01 / theory["GEMM BF16"] * 1980.0
    triad = next(i for i, m in enumerate(run.measurements) if m.suite == "stream" and m.kernel == "triad")
    tm = d["measurements"][triad]
    factor = 1.05 * theory["DRAM bandwidth"] / run.measurements[triad].gbps
    tm["samples_s"] = [s / factor for s in tm["samples_s"]]
    for key in ("median_s", "min_s", "max_s", "iqr_s", "cv", "gflops", "gbps"):
        tm.pop(key)
    changed = Run.from_dict(d, source="run_h100_power.json")
    assert changed.measurements[bf16].over_limit is not None
    assert changed.measurements[bf16].over_limit.reason == "clock misread"
    assert changed.measurements[triad].over_limit is not None
    assert changed.measurements[triad].over_limit.reason == "cache-resident working set"
    measured = {c.name: c for c in changed.ceilings if c.source == "measured"}
    assert measured["DRAM bandwidth"].value <= theory["DRAM bandwidth"]
    assert not measured["DRAM bandwidth"].from_.startswith("stream/triad")
    assert measured["Matrix BF16→FP32"].value < gflops  # the next shape within its limit
    md = to_markdown(changed)
    assert max(_percentages(md)) <= 100.0
    assert md.count("sets no ceiling and no level") >= 2


# -- the runner ------------------------------------------------------------------------------------------


def test_the_runner_flags_and_warns_before_it_derives_the_ceilings(
    fake: FakeBackend,  # noqa: F811 (pytest's fixture, imported from test_tuning above to be found)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """run_roofline over the faked GPU of the tuning tests (STREAM at 1 ms a launch), with an interface
    slower than what it measured: every STREAM figure is flagged and warned about, none is a ceiling,
    and the file written says so."""
    backend = fake
    backend.max_pipeline = 1024  # the stream table's CUDA block
    monkeypatch.setattr(runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(runner, "open_device", lambda spec: backend)
    slow = Ceiling("DRAM bandwidth", "bandwidth", 1e-3, "GB/s", "theoretical", "a very narrow bus")
    monkeypatch.setattr(runner, "device_theoretical", lambda info: ({"theoretical": {"clock_hz": 1e9}}, [slow]))
    run = runner.run_roofline(RunOptions(device="cuda:0", suites=["stream"], array_bytes=4096, reps=2, telemetry=False))
    stream = [m for m in run.measurements if m.suite == "stream"]
    assert stream and all(
        m.over_limit is not None and m.over_limit.reason == "cache-resident working set" for m in stream
    )
    assert not [c for c in run.ceilings if c.source == "measured" and c.kind == "bandwidth"]
    assert sum("is above the theoretical DRAM bandwidth" in w for w in run.warnings) == len(stream)
    again = Run.from_dict(json.loads(json.dumps(run.to_dict())), source="run.json")
    assert [m.over_limit for m in again.measurements] == [m.over_limit for m in run.measurements]


def test_a_sweep_point_is_held_against_the_fma_pipe_its_chains_run_on() -> None:
    """A sweep point has no ceiling class of its own, but its chains run on the FP32 pipe: one above
    the FP32 vector peak at its clock is flagged "clock misread" (a 2-vCPU guest's wall-clock chain
    once read the clock low enough for a sweep point to show 155 % of it); one below is not."""

    def point(kernel: str, gflops: float, F: int) -> Measurement:
        ops = 10**12
        samples, batch = _timed(gflops * 1e9, ops)
        return Measurement("sweep", kernel, "fp32", {"F": F}, ops, 10**9, samples, True, None, None, batch, "ok")

    # two points of the sweep (one F each: a run holds a measurement once)
    run = _h200_run([point("vec4", 70_000.0, 256), point("vec4", 60_000.0, 512)])
    over = [m.over_limit for m in run.measurements]
    assert over[1] is None and over[0] is not None
    assert over[0].reason == CLOCK_MISREAD and over[0].figure == pytest.approx(70_000.0)
    assert over[0].limit == pytest.approx(66_908.0) and "FP32 vector" in over[0].against
