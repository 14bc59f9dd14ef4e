"""The binding's cost from interleaved samples: the median's order-statistics interval
(stats.median_interval), the paired estimator and its verdicts (dispatch.paired), the interleaving
order (dispatch.run.runner.interleave), and pairings in results files and reports.

Synthetic samples come from NumPy generators with fixed seeds; nothing is timed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
import pytest

from apple_roofline.dispatch import (
    DispatchStudy,
    LatencySeries,
    PairedDifference,
    Pairing,
    binding_cost,
    cost_text,
    format_dispatch,
    pair_order,
    paired_difference,
)
from apple_roofline.dispatch.paired import STATUSES
from apple_roofline.dispatch.run.runner import interleave
from apple_roofline.study import ResultsError, ToolInfo
from apple_roofline.timing.stats import median_interval

US = 1e-6
SEED = 20261127


# --------------------------------------------------------------------------
# stats.median_interval


def _exact_coverage(n: int, rank: int) -> float:
    """1 - 2 P(B <= rank - 1), B ~ Binomial(n, 1/2), in exact integers."""
    return 1.0 - 2.0 * sum(math.comb(n, k) for k in range(rank)) / 2**n


@pytest.mark.parametrize("n", range(1, 41))
def test_median_interval_rank_is_the_largest_that_reaches_the_level(n: int) -> None:
    ci = median_interval([float(i) for i in range(n)])
    if ci.rank == 0:
        assert _exact_coverage(n, 1) < 0.95 and not ci.reached
        assert (ci.low, ci.high) == (0.0, n - 1.0)
        assert ci.coverage == pytest.approx(_exact_coverage(n, 1))
    else:
        assert ci.reached and ci.coverage == pytest.approx(_exact_coverage(n, ci.rank), abs=1e-12)
        assert ci.coverage >= 0.95 > _exact_coverage(n, ci.rank + 1)
        assert (ci.low, ci.high) == (ci.rank - 1.0, n - ci.rank * 1.0)  # x(l) and x(n + 1 - l), 1-based
    assert ci.median == pytest.approx((n - 1) / 2)


def test_median_interval_known_ranks_and_order() -> None:
    # n = 100 at 95 %: the 40th and 61st order statistics (coverage 0.9648)
    x = np.random.default_rng(SEED).permutation(np.arange(1.0, 101.0))
    ci = median_interval(x.tolist())
    assert (ci.rank, ci.low, ci.high) == (40, 40.0, 61.0)
    assert ci.coverage == pytest.approx(0.9648, abs=1e-4)
    assert median_interval([float(i) for i in range(6)]).rank == 1  # the smallest n that reaches 95 %
    assert median_interval([float(i) for i in range(5)]).rank == 0
    wide = median_interval(x.tolist(), confidence=0.99)
    assert wide.low < ci.low and wide.high > ci.high and wide.coverage >= 0.99


def test_median_interval_large_n_is_finite_and_tight() -> None:
    ci = median_interval(np.arange(100_000, dtype=float).tolist())
    assert 0.95 <= ci.coverage < 0.951 and ci.high - ci.low < 700


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"confidence": 1.0}, "strictly between 0 and 1"),
        ({"confidence": 0}, "strictly between 0 and 1"),
        ({"confidence": True}, "strictly between 0 and 1"),
        ({"samples": []}, "must not be empty"),
        ({"samples": [1.0, math.nan]}, "must be finite"),
    ],
)
def test_median_interval_errors(kw: Dict[str, Any], match: str) -> None:
    args = {"samples": [1.0, 2.0], **kw}
    with pytest.raises(ValueError, match=match):
        median_interval(**args)


def test_median_interval_coverage_on_skewed_samples() -> None:
    """Over 2000 samples of 60 skewed values with a known median, the interval covers it as often
    as its exact coverage says (within 3 standard errors), and never far more often."""
    rng = np.random.default_rng(SEED)
    shift, scale, n, trials = 0.2, 0.3, 60, 2000
    hits = 0
    coverage = 0.0
    for _ in range(trials):
        # exponential noise has median scale * ln 2: centred on it, the samples' median is `shift`
        ci = median_interval((shift + rng.exponential(scale, n) - scale * math.log(2)).tolist())
        hits += ci.low <= shift <= ci.high
        coverage = ci.coverage
    se = math.sqrt(coverage * (1 - coverage) / trials)
    assert coverage >= 0.95
    assert abs(hits / trials - coverage) < 3 * se, (hits / trials, coverage)


# --------------------------------------------------------------------------
# dispatch.paired


def _drifting(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A host whose speed drifts by 1 µs over the run: a base time per instant, native samples and
    python samples ``shift`` slower, each with skewed noise of median 0."""
    drift = np.linspace(0.0, 1.0, 2 * n) * US
    noise = lambda: (rng.exponential(0.05, 2 * n) - 0.05 * math.log(2)) * US  # noqa: E731
    native = 3.0 * US + drift + noise()
    python = 3.0 * US + shift + drift + noise()
    return drift, native, python


def test_paired_estimator_cancels_drift_that_medians_carry() -> None:
    rng = np.random.default_rng(SEED)
    n, shift = 400, 0.2 * US
    _drift, native, python = _drifting(rng, n, shift)
    # interleaved: pair i is taken at instants 2i and 2i+1, the first path alternating
    order = pair_order(n)
    nat = [native[2 * i + (p != "native")] for i, p in enumerate(order)]
    py = [python[2 * i + (p != "python")] for i, p in enumerate(order)]
    d = paired_difference(py, nat)
    assert d.n == n and d.low_s <= shift <= d.high_s and d.resolved
    assert d.width_s < 0.05 * US
    # the same host, each path's series measured in one stretch, one after the other: the difference
    # of the medians carries half the drift and lies far outside the paired interval
    apart = float(np.median(python[n:]) - np.median(native[:n]))
    assert apart > d.high_s + 0.4 * US


def test_paired_difference_values() -> None:
    d = paired_difference([5 * US, 6 * US, 7 * US, 8 * US, 9 * US, 10 * US], [4 * US] * 6)
    assert d.n == 6 and d.median_s == pytest.approx(3.5 * US)
    assert (d.low_s, d.high_s) == pytest.approx((1 * US, 6 * US))  # rank 1 at n = 6
    assert d.confidence == 0.95 and d.coverage == pytest.approx(0.96875)
    assert d.to_dict()["status"] == d.status


@pytest.mark.parametrize(
    "diffs, status, words",
    [
        ([0.20, 0.21, 0.19, 0.22, 0.18, 0.20, 0.21], "resolved", "resolved"),
        ([-0.1, 0.3, 0.1, 0.2, -0.2, 0.05, 0.15], "includes_zero", "not resolved: the interval includes zero"),
        ([0.0, 0.3, 0.1, 0.2, 0.25, 0.05, 0.15], "includes_zero", "not resolved: the interval includes zero"),
        ([-0.3, -0.32, -0.31, -0.33, -0.30, -0.29, -0.31], "negative", "not resolved: the interval lies below zero"),
        (
            [0.05, 0.5, 0.1, 0.2, 0.9, 0.08, 0.15],
            "wider_than_effect",
            "not resolved: the interval is wider than the effect",
        ),
        ([0.2, 0.21, 0.2, 0.2, 0.2], "too_few_pairs", "not resolved: 5 pairs cannot give a 95 % interval"),
    ],
)
def test_status_and_wording(diffs: List[float], status: str, words: str) -> None:
    d = paired_difference([3 * US + x * US for x in diffs], [3 * US] * len(diffs))
    assert d.status == status and d.verdict.startswith(words), d.verdict
    assert d.resolved == (status == "resolved") and status in STATUSES


def test_interval_including_zero_is_never_resolved() -> None:
    """Whatever the median, an interval that includes zero is reported unresolved."""
    rng = np.random.default_rng(SEED)
    for _ in range(200):
        diffs = rng.normal(rng.uniform(-0.3, 0.3), 0.5, 30)
        d = paired_difference((3 + diffs).tolist(), [3.0] * 30)
        if d.low_s <= 0 <= d.high_s:
            assert not d.resolved and d.verdict == "not resolved: the interval includes zero"
        elif d.resolved:
            assert d.low_s > 0 and d.width_s <= d.median_s


@pytest.mark.parametrize(
    "python, native, match",
    [
        ([1.0, 2.0], [1.0], "differ in length: 2 python, 1 native"),
        ([], [], "must not be empty"),
    ],
)
def test_paired_difference_errors(python: List[float], native: List[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        paired_difference(python, native)


# --------------------------------------------------------------------------
# the interleaving order (dispatch.paired.pair_order, dispatch.run.runner.interleave)


def test_pair_order_alternates() -> None:
    assert pair_order(1) == ("native",)
    order = pair_order(7)
    assert order == ("native", "python", "native", "python", "native", "python", "native")
    assert all(a != b for a, b in zip(order, order[1:]))
    assert abs(order.count("native") - order.count("python")) <= 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="valid: 1 or more"):
            pair_order(bad)  # type: ignore[arg-type]


def test_interleave_takes_each_pair_back_to_back_in_order() -> None:
    calls: List[str] = []

    def sampler(path: str) -> Callable[[], float]:
        def sample() -> float:
            calls.append(path)
            return float(len(calls))  # the instant of the call

        return sample

    got = interleave({"native": sampler("native"), "python": sampler("python")}, pair_order(4))
    assert calls == ["native", "python", "python", "native", "native", "python", "python", "native"]
    # pair i holds the samples taken at instants 2i+1 and 2i+2: neighbours in time
    assert got["native"] == [1.0, 4.0, 5.0, 8.0] and got["python"] == [2.0, 3.0, 6.0, 7.0]
    for n, p in zip(got["native"], got["python"]):
        assert abs(n - p) == 1.0


def test_interleave_errors() -> None:
    with pytest.raises(ValueError, match="must be exactly native, python"):
        interleave({"native": lambda: 1.0}, ("native",))
    with pytest.raises(ValueError, match=r"order\[1\] 'cupy' is not one of native, python"):
        interleave({"native": lambda: 1.0, "python": lambda: 1.0}, ("native", "cupy"))


# --------------------------------------------------------------------------
# pairings in results files and reports


def _study(py: List[float], nat: List[float], *, pair: bool = True, **kw: Any) -> DispatchStudy:
    series = (
        LatencySeries("null", "throughput", "native", "host", tuple(nat), 100),
        LatencySeries("null", "throughput", "python", "host", tuple(py), 100),
    )
    pairings = (Pairing("null", "throughput", pair_order(len(py)), 0.95),) if pair else ()
    args: Dict[str, Any] = dict(
        tool=ToolInfo("apple-roofline", "0", None),
        created="2026-11-27T10:00:00+00:00",
        host={"os": "Linux"},
        device={"backend": "cuda", "name": "Test GPU"},
        command=("apple-roofline", "dispatch"),
        params={"reps": len(py), "launches": 100, "warmup": 0},
        series=series,
        pairings=pairings,
        finished="2026-11-27T10:01:00+00:00",
    )
    args.update(kw)
    return DispatchStudy(**args)


NAT = [4.0 * US, 4.1 * US, 3.9 * US, 4.2 * US, 4.0 * US, 4.05 * US, 3.95 * US, 4.1 * US]
PY_RESOLVED = [x + 0.2 * US + e * US for x, e in zip(NAT, (0.01, -0.01, 0.0, 0.02, -0.02, 0.01, 0.0, -0.01))]
PY_ZERO = [x + e * US for x, e in zip(NAT, (0.3, -0.3, 0.1, -0.1, 0.2, -0.2, 0.05, -0.05))]


def test_pairing_round_trips_and_states_its_difference(tmp_path: Path) -> None:
    st = _study(PY_RESOLVED, NAT)
    d = json.loads(st.to_json())
    (p,) = d["pairings"]
    assert p["first"] == list(pair_order(8)) and p["clock"] == "host" and p["confidence"] == 0.95
    want = paired_difference(PY_RESOLVED, NAT)
    assert p["difference"] == want.to_dict() and p["difference"]["status"] == "resolved"
    st.save(tmp_path / "d.json")
    assert DispatchStudy.load(tmp_path / "d.json") == st
    assert st.paired("null", "throughput") == want and st.paired("tiny", "throughput") is None


def test_file_without_pairings_reads_and_is_not_resolved() -> None:
    d = json.loads(_study(PY_RESOLVED, NAT).to_json())
    del d["pairings"]
    st = DispatchStudy.from_dict(d)
    assert st.pairings == ()
    (c,) = binding_cost(st)
    assert c.paired is None and not c.resolved
    assert cost_text(c) == (
        "python − native: not resolved: the paths were not measured interleaved, and a "
        "difference of two medians taken apart carries the host's drift"
    )


def _edited(edit: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    d = json.loads(_study(PY_RESOLVED, NAT).to_json())
    edit(d)
    return d


@pytest.mark.parametrize(
    "edit, match",
    [
        (
            lambda d: d["pairings"][0]["difference"].update(median_s=1e-6),
            r"pairings\[0\]\.difference\.median_s 1e-06 is not the median of the paired differences",
        ),
        (lambda d: d["pairings"][0]["difference"].update(low_s=0.0), r"pairings\[0\]\.difference\.low_s"),
        (
            lambda d: d["pairings"][0]["difference"].update(status="includes_zero"),
            r"pairings\[0\]\.difference\.status 'includes_zero' is not what the paired samples give "
            r"\(valid: 'resolved'",
        ),
        (
            lambda d: d["pairings"][0]["difference"].update(n=7),
            r"pairings\[0\]\.difference\.n 7 is not the number of pairs",
        ),
        (lambda d: d["pairings"][0].update(first=["native"] * 7), "7 pairs but 8 python samples"),
        (
            lambda d: d["pairings"][0].update(first=["native"] * 7 + ["cupy"]),
            r"first\[7\] 'cupy' is not one of native, python",
        ),
        (
            lambda d: d["pairings"][0].update(clock="device"),
            r"pairings\[0\]\.clock 'device' is not the clock of a pairing",
        ),
        (lambda d: d["pairings"][0].update(measure="step"), "measure 'step' is not one of throughput, round_trip"),
        (lambda d: d["pairings"][0].update(confidence=1.5), "confidence 1.5 is out of range"),
        (lambda d: d["pairings"].append(dict(d["pairings"][0])), "null/throughput is given twice"),
        (lambda d: d["series"].pop(1), "0 python host-clock series"),
    ],
)
def test_bad_pairings_are_refused_naming_the_field(edit: Callable[[Dict[str, Any]], None], match: str) -> None:
    with pytest.raises(ResultsError, match=match):
        DispatchStudy.from_dict(_edited(edit), source="d.json")


def test_report_says_resolved_and_unresolved() -> None:
    md = format_dispatch(_study(PY_RESOLVED, NAT))
    assert (
        "- **null throughput**: python − native = +0.200 µs per launch (median of 8 paired differences, "
        "95 % interval +0.180 to +0.220 µs): resolved (python p50"
    ) in md
    assert "interleaved" in md and "a negative or unresolved cost is not a finding" in md
    md0 = format_dispatch(_study(PY_ZERO, NAT))
    assert "8 paired differences, 95 % interval -0.300 to +0.300 µs): not resolved: the interval includes zero" in md0
    (c,) = binding_cost(_study(PY_ZERO, NAT))
    assert isinstance(c.paired, PairedDifference) and c.paired.median_s == pytest.approx(0.0, abs=1e-15)


# --------------------------------------------------------------------------
# recorded studies (tests/unit/data): one measured interleaved, one written before


DATA = Path(__file__).parent / "data"


def test_recorded_interleaved_study() -> None:
    """A CPU study measured interleaved (8 pairs of each kernel and measure): every stored
    difference is the one its samples give, and the report states each with its interval."""
    raw = json.loads((DATA / "dispatch_paired_epyc_2vcpu.json").read_text())
    st = DispatchStudy.load(DATA / "dispatch_paired_epyc_2vcpu.json")
    assert raw["schema_version"] == 1 and len(st.pairings) == 4
    md = format_dispatch(st)
    for p, stored in zip(st.pairings, raw["pairings"]):
        python = st.find(p.kernel, p.measure, "python", "host")
        native = st.find(p.kernel, p.measure, "native", "host")
        assert python is not None and native is not None and p.first == pair_order(8)
        want = paired_difference(python.samples_s, native.samples_s)
        assert stored["difference"] == want.to_dict() and st.paired(p.kernel, p.measure) == want
        assert f"**{p.kernel} {p.measure}**: python − native = " in md
    assert md.count("median of 8 paired differences, 95 % interval") == 4
    assert all(c.paired is not None for c in binding_cost(st))


def test_recorded_study_written_before_pairings_still_reads() -> None:
    """Schema version 1 stays readable: a file without ``pairings`` reads with none, keeps its
    per-path distributions, and gives no binding cost (not resolved)."""
    st = DispatchStudy.load(DATA / "dispatch_epyc_2vcpu.json")
    assert st.pairings == () and st.paired("null", "throughput") is None
    costs = binding_cost(st)
    assert costs and all(c.paired is None and c.verdict.startswith("not resolved") for c in costs)
    assert all(c.python_p50_s > 0 and c.native_p50_s > 0 for c in costs)
    assert "not resolved: the paths were not measured interleaved" in format_dispatch(st)
