"""The dispatch-latency study: its data model (dispatch.model), its reports, its plot and its files.

Every study here is built by hand, with sample values chosen so that medians and differences are
known exactly; nothing is timed.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from apple_roofline.dispatch import (
    CLOCKS,
    KERNELS,
    MEASURES,
    DispatchStudy,
    LatencySeries,
    Pairing,
    PeerSkipped,
    pair_order,
)
from apple_roofline.dispatch.model import DISTRIBUTION_KEYS
from apple_roofline.dispatch.outputs import STUDY_FILES, write_study
from apple_roofline.dispatch.report import (
    LATENCY_COLUMNS,
    LATENCY_CSV_COLUMNS,
    BindingCost,
    binding_cost,
    format_dispatch,
    latency_table,
    step_medians,
)
from apple_roofline.errors import OptionError
from apple_roofline.study import ResultsError, ToolInfo
from apple_roofline.timing.stats import summarize

US = 1e-6


def _us(*values: float) -> tuple[float, ...]:
    return tuple(v * US for v in values)


def _series(kernel: str, measure: str, path: str, clock: str, samples: tuple[float, ...], **kw: Any) -> LatencySeries:
    return LatencySeries(kernel=kernel, measure=measure, path=path, clock=clock, samples_s=samples, **kw)


def make_study(series: tuple[LatencySeries, ...] | None = None, **kw: Any) -> DispatchStudy:
    """A study of a made-up GPU whose medians are round numbers of µs."""
    default = series is None
    if series is None:
        series = (
            _series("null", "throughput", "native", "host", _us(1, 2, 3), launches_per_sample=1000),
            _series("null", "throughput", "native", "device", _us(0.5, 1, 1.5), launches_per_sample=1000),
            _series("null", "throughput", "python", "host", _us(4, 5, 6), launches_per_sample=1000),
            _series("null", "throughput", "cupy", "host", _us(7, 8, 9), launches_per_sample=1000),
            _series("null", "throughput", "cupy", "device", _us(1, 1, 1), launches_per_sample=1000),
            _series(
                "null",
                "throughput",
                "torch",
                "host",
                _us(10, 11, 12),
                launches_per_sample=1000,
                valid=False,
                validation="output 0 != 1",
            ),
            _series("null", "round_trip", "native", "host", _us(10, 20, 30)),
            _series("null", "round_trip", "python", "host", _us(25, 35, 45)),
            _series("null", "round_trip", "mlx", "host", _us(50, 60, 70)),
            _series("tiny", "throughput", "native", "host", _us(2, 2, 2), launches_per_sample=1000),
            _series("tiny", "throughput", "python", "host", _us(3, 3, 3), launches_per_sample=1000, valid=False),
            _series("tiny", "round_trip", "native", "host", _us(12, 13, 14)),
            _series("null", "start_latency", "native", "device", _us(-1, 1, 3), note="globaltimer mapped, ±0.2 µs"),
            _series("null", "step", "native", "host", _us(3, 3, 3), step="launch"),
            _series("null", "step", "native", "device", _us(-1, -1, -1), step="start"),
            _series("null", "step", "native", "host", _us(5, 5, 5), step="complete"),
            _series("tiny", "step", "native", "device", _us(-0.5, -0.5), step="start"),
            _series("tiny", "step", "native", "host", _us(2, 2), step="launch"),
            _series("tiny", "step", "python", "host", _us(9, 9), step="launch"),
        )
    args: dict[str, Any] = {
        "tool": ToolInfo("apple-roofline", "0", None),
        "created": "2026-11-21T10:00:00+00:00",
        "host": {"os": "Linux 6.8", "machine": "x86_64"},
        "device": {"backend": "cuda", "name": "Test GPU", "sm_count": 4},
        "command": ("apple-roofline", "dispatch"),
        "params": {"reps": 3, "launches": 1000, "warmup": 10},
        "series": series,
        "skipped": (PeerSkipped("pyobjc", "not on macOS"),),
        # null throughput was measured interleaved (3 pairs: too few for an interval), the rest not
        "pairings": (Pairing("null", "throughput", pair_order(3), 0.95),) if default else (),
        "warnings": ("clock mapping uncertainty 0.2 µs",),
        "finished": "2026-11-21T10:01:00+00:00",
    }
    args.update(kw)
    return DispatchStudy(**args)


@pytest.fixture
def study() -> DispatchStudy:
    return make_study()


# --------------------------------------------------------------------------
# a series' distribution: stats.summarize(samples, positive=False)


def test_distribution_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    samples = rng.lognormal(mean=-12.0, sigma=0.4, size=257)
    d = summarize(list(samples), positive=False)
    assert _series("null", "round_trip", "native", "host", tuple(samples)).distribution == d
    p10, p50, p90, p99 = np.percentile(samples, [10, 50, 90, 99])
    assert d.n == 257
    assert (d.p10, d.p50, d.p90, d.p99) == pytest.approx((p10, p50, p90, p99), rel=1e-12)
    assert d.min == samples.min() and d.max == samples.max()
    assert d.mean == pytest.approx(samples.mean(), rel=1e-12)


def test_distribution_small_and_numpy_scalars() -> None:
    d = summarize([np.float32(3.0), 1, np.int64(2)], positive=False)
    assert (d.n, d.min, d.p50, d.max, d.mean) == (3, 1.0, 2.0, 3.0, 2.0)
    assert d.p10 == pytest.approx(1.2) and d.p99 == pytest.approx(2.98)
    one = summarize([5e-6], positive=False)
    assert one.p10 == one.p50 == one.p99 == one.max == 5e-6


@pytest.mark.parametrize(
    ("samples", "match"),
    [
        ([], "must not be empty"),
        ([1.0, float("nan")], r"samples\[1\]"),
        ([-1.0, 0.0, float("nan")], r"samples\[2\]"),  # zero and negative admitted, NaN not
        ([float("inf")], r"samples\[0\]"),
        ([True], r"samples\[0\]"),
        (["1e-6"], r"samples\[0\]"),
    ],
)
def test_distribution_errors(samples: list[Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        summarize(samples, positive=False)


# --------------------------------------------------------------------------
# LatencySeries


def test_series_valid_and_label() -> None:
    s = _series("null", "round_trip", "python", "host", (1e-6, 2e-6))
    assert s.samples_s == (1e-6, 2e-6)
    assert s.label == "null round_trip python (host)"
    assert s.distribution.p50 == pytest.approx(1.5e-6)
    step = _series("tiny", "step", "native", "device", (1e-6,), step="commit")
    assert step.label == "tiny step/commit native (device)"
    assert set(KERNELS) == {"null", "tiny"} and "step" in MEASURES and CLOCKS == ("device", "host")


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"kernel": "big"}, "kernel 'big'"),
        ({"measure": "bandwidth"}, "measure 'bandwidth'"),
        ({"clock": "wall"}, "clock 'wall'"),
        ({"path": ""}, "path must not be empty"),
        ({"samples_s": ()}, "samples must not be empty"),
        ({"samples_s": (1e-6, float("nan"))}, r"samples_s\[1\].*not finite"),
        ({"samples_s": (float("inf"),)}, r"samples_s\[0\].*not finite"),
        ({"samples_s": (1e-6, -1e-6)}, "only start latencies and steps may be zero or negative"),
        ({"measure": "throughput", "samples_s": (-1e-9,)}, "only start latencies and steps may be zero or negative"),
        ({"measure": "throughput", "samples_s": (0.0,)}, "only start latencies and steps may be zero or negative"),
        ({"launches_per_sample": 0}, "launches_per_sample"),
        ({"launches_per_sample": True}, "launches_per_sample"),
        ({"measure": "step"}, "step name is required"),
        ({"step": "commit"}, "step name is required for measure 'step' and only there"),
    ],
)
def test_series_rejects(kw: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {
        "kernel": "null",
        "measure": "round_trip",
        "path": "native",
        "clock": "host",
        "samples_s": (1e-6,),
    }
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        LatencySeries(**args)


def test_negative_allowed_for_start_latency_and_step() -> None:
    start = _series("null", "start_latency", "native", "device", (-2e-6, 0.0, 1e-6))
    assert start.distribution.min == -2e-6
    step = _series("null", "step", "native", "device", (-1e-6,), step="start")
    assert step.distribution.p50 == -1e-6


def test_study_requires_backend_and_name() -> None:
    with pytest.raises(ValueError, match="'backend'"):
        make_study(device={"name": "x"})
    with pytest.raises(ValueError, match="'name'"):
        make_study(device={"backend": "cpu"})


def test_study_find_and_valid(study: DispatchStudy) -> None:
    assert study.backend == "cuda" and study.device_name == "Test GPU"
    assert not study.valid
    s = study.find("null", "throughput", "cupy", "device")
    assert s is not None and s.samples_s == _us(1, 1, 1)
    any_clock = study.find("null", "throughput", "cupy")
    assert any_clock is not None and any_clock.clock == "host"
    found = study.find("tiny", "step", "native", step="launch")
    assert found is not None and found.samples_s == _us(2, 2)
    assert study.find("tiny", "start_latency", "native") is None


# --------------------------------------------------------------------------
# JSON


def test_json_round_trip(study: DispatchStudy, tmp_path: Path) -> None:
    text = study.to_json()
    data = json.loads(text)
    assert data["kind"] == "dispatch" and data["schema_version"] == 1
    assert data["series"][0]["distribution"]["p50"] == pytest.approx(2e-6)
    assert tuple(data["series"][0]["distribution"]) == DISTRIBUTION_KEYS
    assert DISTRIBUTION_KEYS == ("n", "min", "p10", "p50", "p90", "p99", "max", "mean")
    assert DispatchStudy.from_json(text) == study
    path = tmp_path / "dispatch.json"
    study.save(path)
    back = DispatchStudy.load(path)
    assert back == study
    assert back.series[12].note == "globaltimer mapped, ±0.2 µs"
    assert back.skipped == (PeerSkipped("pyobjc", "not on macOS"),)
    assert back.series[5].valid is False and back.series[5].validation == "output 0 != 1"


def test_json_distribution_must_be_the_samples_own(study: DispatchStudy) -> None:
    data = json.loads(study.to_json())
    del data["series"][0]["distribution"]  # written for other readers, recomputed on reading
    assert DispatchStudy.from_dict(data).series[0].distribution.p50 == pytest.approx(2e-6)
    for key, value, match in (
        ("p50", 123.0, r"p50 123\.0 lies outside samples_s \(valid: 1e-06 to 3e-06\)"),
        ("p90", 2.1e-6, r"p90 2\.1e-06 is not the p90 of samples_s \(valid: 2\.8"),
        ("n", 4, r"n 4 is not the number of samples in samples_s \(valid: 3\)"),
        ("min", -1e-6, r"min must be a positive number of seconds, not -1e-06"),
    ):
        data = json.loads(study.to_json())
        data["series"][0]["distribution"][key] = value
        with pytest.raises(ResultsError, match=r"s\.json: series\[0\]\.distribution\." + match):
            DispatchStudy.from_dict(data, source="s.json")
    # a start latency may be negative, in its distribution too (series 12: samples of -1, 1 and 3 µs)
    data = json.loads(study.to_json())
    assert data["series"][12]["distribution"]["min"] < 0
    assert DispatchStudy.from_dict(data) == study


def _broken(study: DispatchStudy, edit: Any) -> str:
    data = json.loads(study.to_json())
    edit(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["series"][0].pop("kernel"), r"study\.json: series\[0\]\.kernel is missing"),
        (
            lambda d: d["series"][1].__setitem__("samples_s", [1e-6, "x"]),
            r"series\[1\]\.samples_s\[1\] must be a positive number of seconds, not 'x'",
        ),
        (lambda d: d["series"][2].__setitem__("samples_s", "1e-6"), r"series\[2\]\.samples_s must be an array"),
        (lambda d: d["series"][0].__setitem__("valid", "yes"), r"series\[0\]\.valid must be true or false"),
        (lambda d: d["series"][0].__setitem__("launches_per_sample", 0), r"series\[0\]\.launches_per_sample"),
        (lambda d: d["series"][0].__setitem__("kernel", "big"), r"study\.json: .*kernel 'big'"),
        (
            lambda d: d["series"][6].__setitem__("samples_s", [-1e-6]),
            r"study\.json: series\[6\]\.samples_s\[0\] must be a positive number of seconds, not -1e-06",
        ),
        (lambda d: d["skipped"][0].pop("reason"), r"skipped\[0\]\.reason is missing"),
        (lambda d: d.__setitem__("kind", "run"), "kind is 'run'"),
        (lambda d: d.__setitem__("schema_version", 2), "schema_version 2 is not supported"),
        (lambda d: d["device"].pop("name"), r"device\.name is missing"),
        (lambda d: d.pop("complete"), "complete is missing"),
        (lambda d: d.__setitem__("command", ["a", 1]), r"command\[1\] must be a string"),
    ],
)
def test_json_strict_errors_name_the_field(study: DispatchStudy, edit: Any, match: str) -> None:
    with pytest.raises(ResultsError, match=match):
        DispatchStudy.from_json(_broken(study, edit), source="study.json")


def test_json_text_errors(study: DispatchStudy, tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="empty"):
        DispatchStudy.from_json("  \n", source="s.json")
    with pytest.raises(ResultsError, match="truncated or not JSON"):
        DispatchStudy.from_json(study.to_json()[:-40], source="s.json")
    with pytest.raises(ResultsError, match=r"s\.json: params\.reps must be a finite number, not NaN"):
        DispatchStudy.from_json(study.to_json().replace('"reps": 3', '"reps": NaN'), source="s.json")
    with pytest.raises(ResultsError, match="top level must be a JSON object"):
        DispatchStudy.from_json("[]", source="s.json")
    with pytest.raises(ResultsError, match="no such file"):
        DispatchStudy.load(tmp_path / "missing.json")


def test_json_refuses_non_finite_params(tmp_path: Path) -> None:
    bad = make_study(params={"reps": float("nan")})
    with pytest.raises(ResultsError, match="not finite"):
        bad.to_json()
    with pytest.raises(ResultsError):
        bad.save(tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


# --------------------------------------------------------------------------
# dispatch.report


def test_latency_table(study: DispatchStudy) -> None:
    header, rows = latency_table(study)
    assert header == list(LATENCY_COLUMNS)
    assert header[:5] == ["kernel", "measure", "path", "clock", "n"] and header[-1] == "valid"
    assert len(rows) == len(study.series)
    assert all(len(r) == len(header) for r in rows)
    # samples 1, 2, 3 µs: p10 = 1.2, p50 = 2, p90 = 2.8, p99 = 2.98, max = 3 (linear interpolation)
    assert rows[0] == ["null", "throughput", "native", "host", "3", "1.20", "2.00", "2.80", "2.98", "3.00", "yes"]
    assert rows[5][2] == "torch" and rows[5][-1] == "NO: output 0 != 1"
    assert rows[10][-1] == "NO"  # invalid, no reason recorded
    assert rows[12][:4] == ["null", "start_latency", "native", "device"] and rows[12][5] == "-0.600"
    assert rows[13][1] == "step: launch" and rows[14][1] == "step: start" and rows[14][6] == "-1.00"


def test_binding_cost_arithmetic(study: DispatchStudy) -> None:
    costs = binding_cost(study)
    # tiny has no valid python series (throughput: invalid; round trip: none), so only null counts
    assert [(c.kernel, c.measure) for c in costs] == [("null", "throughput"), ("null", "round_trip")]
    tp, rt = costs
    assert tp.native_p50_s == pytest.approx(2e-6) and tp.python_p50_s == pytest.approx(5e-6)
    # paired: 4-1, 5-2, 6-3 = 3 µs each, but 3 pairs cannot give a 95 % interval
    assert tp.paired is not None and tp.paired.median_s == pytest.approx(3e-6) and tp.paired.n == 3
    assert tp.paired.status == "too_few_pairs" and not tp.resolved
    # the cupy device-clock series and the invalid torch series are not peers
    assert tp.peers == pytest.approx({"cupy": 8e-6})
    assert rt.paired is None and not rt.resolved  # not interleaved: no cost, whatever the medians say
    assert (rt.python_p50_s, rt.native_p50_s) == pytest.approx((35e-6, 20e-6))
    assert rt.peers == pytest.approx({"mlx": 60e-6})
    assert dataclasses.is_dataclass(tp) and isinstance(tp, BindingCost)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tp.paired = None  # type: ignore[misc]
    hash(tp)  # the peers dict is left out of the hash


def test_binding_cost_needs_host_clock_and_validity() -> None:
    series = (
        _series("null", "round_trip", "native", "device", _us(1, 2, 3)),
        _series("null", "round_trip", "python", "host", _us(4, 5, 6)),
        _series("tiny", "round_trip", "native", "host", _us(1, 1, 1), valid=False),
        _series("tiny", "round_trip", "native", "host", _us(2, 2, 2)),  # the first *valid* one counts
        _series("tiny", "round_trip", "python", "host", _us(1.5, 1.5, 1.5)),
    )
    (c,) = binding_cost(make_study(series))
    assert (c.kernel, c.measure) == ("tiny", "round_trip")
    assert c.native_p50_s == pytest.approx(2e-6) and c.python_p50_s == pytest.approx(1.5e-6)
    assert c.paired is None and c.verdict.startswith("not resolved")
    assert c.peers == {}


def test_step_medians_order(study: DispatchStudy) -> None:
    per_kernel = step_medians(study)
    assert [k for k, _steps in per_kernel] == ["null", "tiny"]
    assert [s.step for s, _p in per_kernel[0][1]] == ["launch", "start", "complete"]
    assert [p for _s, p in per_kernel[0][1]] == pytest.approx([3e-6, -1e-6, 5e-6])
    # tiny lists start before launch, but the order is that of first appearance in the study;
    # the python-path step is not a native step
    tiny = [(s.step, s.path) for s, _p in per_kernel[1][1]]
    assert tiny == [("launch", "native"), ("start", "native")]


def _section(md: str, title: str) -> str:
    start = md.index(f"\n## {title}\n")
    end = md.find("\n## ", start + 1)
    return md[start : end if end >= 0 else len(md)]


def test_markdown(study: DispatchStudy) -> None:
    md = format_dispatch(study)
    assert md == format_dispatch(study, "md") and md.endswith("\n")
    assert md.splitlines()[0] == "# Dispatch latency: Test GPU (cuda) — 2026-11-21"
    assert "reps=3, launches=1000, warmup=10" in _section(md, "Parameters")
    dist = _section(md, "Distributions")
    assert "per launch, in µs" in dist and "launches_per_sample" in dist and "1,000 launches" in dist
    assert "| null | throughput | native | host | 3 | 1.20 | 2.00 | 2.80 | 2.98 | 3.00 | yes |" in dist
    assert "NO: output 0 != 1" in dist
    cost = _section(md, "Binding cost")
    assert (
        "**null throughput**: python − native = +3.00 µs per launch (median of 3 paired differences, "
        "95 % interval +3.00 to +3.00 µs): not resolved: 3 pairs cannot give a 95 % interval"
    ) in cost
    assert "(python p50 5.00 µs, native p50 2.00 µs)" in cost
    assert "cupy p50 8.00 µs" in cost and "torch" not in cost
    assert (
        "**null round_trip**: python − native: not resolved: the paths were not measured interleaved" in cost
        and "mlx p50 60.0 µs" in cost
    )
    assert "tiny" not in cost
    steps = _section(md, "Round-trip steps")
    assert "| null | launch | host | 3.00 |" in steps and "| null | start | device | -1.00 |" in steps
    assert "| null | sum of medians | — | 7.00 |" in steps
    assert "| tiny | start | device | -0.500 |" in steps
    skipped = _section(md, "Skipped")
    assert "| pyobjc | not on macOS |" in skipped
    warn = _section(md, "Warnings")
    assert "- clock mapping uncertainty 0.2 µs" in warn
    assert "null throughput torch (host) failed validation: output 0 != 1" in warn
    assert "tiny throughput python (host) failed validation" in warn
    assert "INTERRUPTED" not in md


def test_markdown_interrupted_and_empty_sections() -> None:
    only = (_series("null", "start_latency", "native", "host", _us(1)),)
    md = format_dispatch(make_study(only, complete=False, skipped=(), warnings=()))
    assert "**INTERRUPTED — partial results.**" in md
    assert "Not available" in _section(md, "Binding cost")
    assert "Not measured" in _section(md, "Round-trip steps")
    assert "None." in _section(md, "Skipped")
    assert "study was interrupted" in _section(md, "Warnings")
    assert "no throughput series" in _section(md, "Distributions")


def test_csv(study: DispatchStudy) -> None:
    text = format_dispatch(study, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == list(LATENCY_CSV_COLUMNS)
    assert len(rows) == 1 + len(study.series)
    body = rows[1:]
    i = LATENCY_CSV_COLUMNS.index("p50_s")
    for row, s in zip(body, study.series):
        d = s.distribution
        assert int(row[4]) == d.n
        assert float(row[i]) == d.p50  # full precision, seconds
        assert float(row[LATENCY_CSV_COLUMNS.index("max_s")]) == d.max
    assert body[0][:4] == ["null", "throughput", "native", "host"]
    assert body[5][-1] == "NO: output 0 != 1"
    assert body[13][1] == "step: launch"


def test_json_format_and_bad_format(study: DispatchStudy) -> None:
    assert format_dispatch(study, "json") == study.to_json()
    with pytest.raises(OptionError, match="md, csv, json"):
        format_dispatch(study, "html")


# --------------------------------------------------------------------------
# dispatch.plot


def test_plot_module_does_not_load_matplotlib() -> None:
    code = (
        "import sys; import apple_roofline.dispatch, apple_roofline.dispatch.plot; "
        "print('matplotlib' in sys.modules, 'apple_roofline._core' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False False"


@pytest.fixture
def plot_dispatch() -> Any:
    pytest.importorskip("matplotlib")
    from apple_roofline.dispatch.plot import plot_dispatch as fn

    return fn


def _fig_texts(fig: Any) -> list[str]:
    return [t.get_text() for t in fig.texts]


def _axes_texts(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _legend(ax: Any) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg is not None else []


def test_plot_png(study: DispatchStudy, tmp_path: Path, plot_dispatch: Any) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    path = tmp_path / "dispatch.png"
    fig = plot_dispatch(study, path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert isinstance(fig.canvas, FigureCanvasAgg)
    assert [p.name for p in tmp_path.iterdir()] == ["dispatch.png"]  # no temporary file left
    assert any("Test GPU" in t and "cuda" in t for t in _fig_texts(fig))
    a, b, c, _d = fig.axes[:4]
    for ax in (a, b, c):
        assert ax.get_xscale() == "log" and "µs" in ax.get_xlabel()
    assert "null · native (host)" in _legend(a) and "null · cupy (device)" in _legend(a)
    assert "null · python (host)" in _legend(b) and "null · mlx (host)" in _legend(b)


def test_plot_leaves_invalid_series_out(study: DispatchStudy, plot_dispatch: Any) -> None:
    fig = plot_dispatch(study)
    a = fig.axes[0]
    legend = _legend(a)
    assert "null · torch (host)" not in legend and "tiny · python (host)" not in legend
    gids = [p.get_gid() for ax in fig.axes for p in ax.patches]
    assert "hist:null · torch (host)" not in gids and "hist:null · native (host)" in gids
    (foot,) = [t for t in fig.texts if t.get_gid() == "footnote"]
    text = foot.get_text().replace("\n", " ")
    assert "failed validation" in text
    assert "null throughput torch (host) (output 0 != 1)" in text
    assert "tiny throughput python (host)" in text
    assert "pyobjc (not on macOS)" in text
    # the binding's cost as the report gives it, not the distance between two histograms' medians
    assert text.startswith("Binding cost: null throughput: python − native = +3.00 µs per launch (median of 3 paired")
    assert "null round_trip: python − native: not resolved: the paths were not measured interleaved" in text


def test_plot_p50_lines_and_non_positive_samples(study: DispatchStudy, plot_dispatch: Any) -> None:
    fig = plot_dispatch(study)
    a, _b, c = fig.axes[:3]
    (p50,) = [ln for ln in a.lines if ln.get_gid() == "p50:null · python (host)"]
    assert p50.get_linestyle() == "-" and p50.get_marker() == "v"  # measured: solid, as in every figure
    assert list(p50.get_xdata()) == pytest.approx([5.0, 5.0])  # µs
    # start latency samples -1, 1, 3 µs: median 1 µs drawn, the one sample <= 0 is not
    (start,) = [ln for ln in c.lines if ln.get_gid() == "p50:null · native (device)"]
    assert list(start.get_xdata()) == pytest.approx([1.0, 1.0])
    assert any("1 sample <= 0 µs not drawn" in t for t in _axes_texts(c))


def test_plot_step_breakdown(study: DispatchStudy, plot_dispatch: Any) -> None:
    fig = plot_dispatch(study)
    d = fig.axes[3]
    bars = {p.get_gid(): p for p in d.patches if (p.get_gid() or "").startswith("step:")}
    assert bars["step:null:launch"].get_width() == pytest.approx(3.0)
    assert bars["step:null:start"].get_width() == 0.0  # negative median drawn as 0
    assert bars["step:null:complete"].get_width() == pytest.approx(5.0)
    assert bars["step:null:complete"].get_x() == pytest.approx(3.0)  # stacked after launch and start
    labels = {t.get_gid(): t.get_text() for t in d.texts if (t.get_gid() or "").startswith("steplabel:")}
    assert labels["steplabel:null:launch"] == "launch\n3.00 µs"
    assert labels["steplabel:null:start"].startswith("start\n-1.00 µs")
    assert "steplabel:tiny:launch" in labels and "steplabel:null:python" not in labels
    assert [t.get_text() for t in d.get_yticklabels()] == ["null", "tiny"]


def test_plot_not_measured_panels(plot_dispatch: Any) -> None:
    only = (_series("tiny", "round_trip", "native", "host", _us(4, 5, 6)),)
    fig = plot_dispatch(make_study(only, skipped=()))
    a, b, c, d = fig.axes[:4]
    assert "not measured" in _axes_texts(a)
    assert "not measured" not in _axes_texts(b) and _legend(b)[0] == "tiny · native (host)"
    assert "not measured" in _axes_texts(c)
    assert "not measured" in _axes_texts(d)
    assert not [t for t in fig.texts if t.get_gid() == "footnote"]  # nothing left out


def test_plot_svg_and_pdf(study: DispatchStudy, tmp_path: Path, plot_dispatch: Any) -> None:
    plot_dispatch(study, tmp_path / "dispatch.svg")
    svg = (tmp_path / "dispatch.svg").read_text(encoding="utf-8")
    assert "<svg" in svg
    plot_dispatch(study, str(tmp_path / "dispatch.PDF"))
    assert (tmp_path / "dispatch.PDF").read_bytes().startswith(b"%PDF")


def test_plot_bad_suffix(study: DispatchStudy, tmp_path: Path, plot_dispatch: Any) -> None:
    for name in ("dispatch.jpg", "dispatch"):
        with pytest.raises(ValueError, match=r"\.pdf, \.png, \.svg"):
            plot_dispatch(study, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_plot_needs_a_valid_series(plot_dispatch: Any, tmp_path: Path) -> None:
    bad = (
        _series("null", "round_trip", "native", "host", _us(1), valid=False, validation="wrong"),
        _series("null", "throughput", "native", "host", _us(1), valid=False),
    )
    with pytest.raises(ValueError, match="no valid series"):
        plot_dispatch(make_study(bad), tmp_path / "x.png")
    with pytest.raises(ValueError, match="no series"):
        plot_dispatch(make_study(()))
    assert list(tmp_path.iterdir()) == []


def test_plot_all_start_latencies_non_positive(plot_dispatch: Any) -> None:
    series = (
        _series("null", "start_latency", "native", "device", _us(-2, -1, 0)),
        _series("null", "round_trip", "native", "host", _us(5)),
    )
    fig = plot_dispatch(make_study(series))
    c = fig.axes[2]
    assert any("no sample > 0 µs" in t for t in _axes_texts(c))
    assert math.isclose(fig.axes[1].lines[0].get_xdata()[0], 5.0)


# --------------------------------------------------------------------------
# dispatch.outputs


def test_write_study(study: DispatchStudy, tmp_path: Path, plot_dispatch: Any) -> None:
    written, problems = write_study(study, tmp_path)
    assert [p.name for p in written] == list(STUDY_FILES) and problems == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(STUDY_FILES)  # no temporary file left
    assert DispatchStudy.load(tmp_path / "dispatch.json") == study
    assert (tmp_path / "dispatch.md").read_text(encoding="utf-8") == format_dispatch(study, "md")
    assert (tmp_path / "dispatch.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_write_study_without_a_valid_series(tmp_path: Path, plot_dispatch: Any) -> None:
    bad = make_study((_series("null", "round_trip", "native", "host", _us(1), valid=False),))
    written, problems = write_study(bad, tmp_path)
    assert [p.name for p in written] == ["dispatch.json", "dispatch.md"]
    assert len(problems) == 1 and problems[0].startswith("no plot:") and "no valid series" in problems[0]


def test_write_study_errors(study: DispatchStudy, tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"cannot write .*missing.dispatch\.json"):
        write_study(study, tmp_path / "missing")
    with pytest.raises(ResultsError, match="not finite"):
        write_study(make_study(params={"reps": float("inf")}), tmp_path)
    assert list(tmp_path.iterdir()) == []  # a study JSON cannot hold is never half-written
