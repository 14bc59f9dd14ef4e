"""The time prediction of a ``--quick`` run and the budgets and grid sized from it
(roofline/run/predict.py, roofline/run/quick_plan.py, the suites' work descriptions; docs/design/budgets.md, "Time
budgets"). Rates are given, never measured, so every number here is the same on any machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from apple_roofline.devices import DeviceSpec
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run import runner as roofline_runner
from apple_roofline.roofline.run.budget import MAX_BUDGET_S, default_budgets
from apple_roofline.roofline.run.options import RunOptions
from apple_roofline.roofline.run.predict import (
    CASE_OVERHEAD_S,
    REMEASURE_SHARE,
    Policy,
    Rates,
    case_seconds,
    launch_seconds,
    suite_seconds,
    timing_seconds,
)
from apple_roofline.roofline.run.quick_plan import QUICK_MARGIN, plan_quick, quick_budget
from apple_roofline.study.journal import Journal, journal_path, read_journal
from apple_roofline.study.timing import SuiteClock
from apple_roofline.suites import SuiteContext, registry
from apple_roofline.suites.peak.suite import PEAK_BUFFER_BYTES, peak_buffer_bytes
from apple_roofline.suites.sweep.suite import sweep_buffer_bytes, sweep_F
from apple_roofline.suites.work import QUICK_SHRINK_OPTION, SHRINK_STEPS, CaseWork
from test_tuning import FakeBackend, fake  # noqa: F401  (tests/unit is on the path; the fake device)

MIB = 1 << 20
GB = 1e9
#: A fast machine and one ten times slower in every rate.
FAST = Rates(device_gbps=20.0, device_gflops=100.0, host_write_gbps=5.0, host_check_gbps=5.0)
SLOW = Rates(device_gbps=2.0, device_gflops=10.0, host_write_gbps=0.5, host_check_gbps=0.5)
POLICY = Policy(reps=10, max_warmup_s=0.05)
INFO = {"backend": "cpu", "name": "test CPU", "llc_bytes": 32 * MIB, "threads": 2, "fp16_arithmetic": False}
SUITES = ("stream", "sweep", "peak")


def context(shrink: int = 0, quick: bool = True) -> SuiteContext:
    """A quick CPU run's suite context (nothing opened: the suites' work needs no device)."""
    options = {"max_launch_s": 0.01, QUICK_SHRINK_OPTION: shrink}
    return SuiteContext(None, "cpu", INFO, quick, 256 * MIB, options)


def test_a_launch_lasts_its_bytes_or_its_flops_whichever_is_longer() -> None:
    memory = CaseWork("m", launch_bytes=2 * GB, launch_flops=1e9)
    compute = CaseWork("c", launch_bytes=1e6, launch_flops=50e9)
    assert launch_seconds(memory, FAST) == pytest.approx(0.1)  # 2 GB at 20 GB/s
    assert launch_seconds(compute, FAST) == pytest.approx(0.5)  # 50 GFLOP at 100 GFLOP/s
    assert launch_seconds(CaseWork("h", 1e3, min_launch_s=1e-3), FAST) == 1e-3  # the suite's own floor
    assert launch_seconds(memory, SLOW) == pytest.approx(10 * launch_seconds(memory, FAST))


def test_timing_counts_warm_up_samples_and_a_share_for_remeasuring() -> None:
    # a 0.1-s launch: 3 warm-up launches (0.3 s, more than max_warmup_s + a launch), 10 samples
    assert timing_seconds(0.1, POLICY) == pytest.approx((0.3 + 1.0) * (1 + REMEASURE_SHARE))
    # a 10-µs launch: warm-up runs to max_warmup_s (capped at 64 launches), each sample lasts 1 ms
    assert timing_seconds(1e-5, POLICY) == pytest.approx((64e-5 + 10e-3) * (1 + REMEASURE_SHARE))
    work = CaseWork("s", launch_bytes=2 * GB, write_bytes=1.5 * GB, check_bytes=0.5 * GB)
    want = timing_seconds(0.1, POLICY) + 1.5 / 5 + 0.5 / 5 + CASE_OVERHEAD_S
    assert case_seconds(work, FAST, POLICY) == pytest.approx(want)


def test_a_series_shrinks_its_launches_once_past_the_ridge_one_case_late() -> None:
    """As the sweep does: the case after one that ran under half the first case's bandwidth lasts
    shrink_to_s; the compute-bound case itself still runs at full size."""
    works = [
        CaseWork(f"F={f}", launch_bytes=2 * GB, launch_flops=f * 2 * GB, series="k", shrink_to_s=0.01)
        for f in (1, 64, 256)
    ]
    full = [case_seconds(w, FAST, POLICY) for w in works]
    shrunk = case_seconds(works[2], FAST, POLICY, launch_s=0.01)
    assert suite_seconds(works, FAST, POLICY) == pytest.approx(full[0] + full[1] + shrunk)
    assert shrunk < full[2] / 10


def test_rates_must_be_positive_numbers() -> None:
    with pytest.raises(ValueError, match="device_gbps must be a positive number"):
        Rates(0.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="host_check_gbps"):
        Rates(1.0, 1.0, 1.0, float("inf"))


def test_a_quick_budget_is_a_margin_over_the_prediction_never_below_the_default() -> None:
    assert quick_budget(1.0, 10.0) == 10.0  # a fast machine keeps the default
    assert quick_budget(7.2, 10.0) == 15.0 == pytest.approx(-(-QUICK_MARGIN * 7.2 // 1))
    assert quick_budget(1e6, 10.0) == MAX_BUDGET_S
    assert quick_budget(50.0, 0.0) == 0.0  # no budget stays none


def test_a_slow_machine_gets_larger_quick_budgets_and_every_case_fits_them() -> None:
    defaults = default_budgets(quick=True)
    fast = plan_quick(SUITES, context, FAST, POLICY, defaults, target_s=1e9)
    slow = plan_quick(SUITES, context, SLOW, POLICY, defaults, target_s=1e9)
    assert fast.shrink == slow.shrink == 0
    for name in SUITES:
        assert fast.budgets_s[name] >= defaults[name] and slow.budgets_s[name] >= defaults[name]
        assert slow.predicted_s[name] > fast.predicted_s[name]
        assert slow.budgets_s[name] >= QUICK_MARGIN * slow.predicted_s[name]
    assert any(slow.budgets_s[n] > defaults[n] for n in SUITES)  # the defaults would not have held it


def test_a_suite_without_a_work_description_keeps_its_default_budget() -> None:
    defaults = default_budgets(quick=True)
    plan = plan_quick(("stream", "gemm"), context, SLOW, POLICY, defaults, target_s=1e9)
    assert "gemm" not in plan.predicted_s and plan.budgets_s["gemm"] == defaults["gemm"]


def test_a_run_predicted_too_long_shrinks_its_grid_in_order_and_keeps_both_sweep_curves() -> None:
    defaults = default_budgets(quick=True)
    plan = plan_quick(SUITES, context, SLOW, POLICY, defaults, target_s=1.0)  # nothing fits: every step
    assert plan.shrink == len(SHRINK_STEPS)
    ctx = context(plan.shrink)
    assert peak_buffer_bytes(ctx) == PEAK_BUFFER_BYTES // 4 and sweep_buffer_bytes(ctx) == 128 * MIB
    series: Dict[str, List[str]] = {}
    for w in registry.case_work("sweep", ctx):
        series.setdefault(w.series, []).append(w.label)
    assert sorted(series) == ["scalar8", "vec4"] and all(len(v) == len(sweep_F(True)) for v in series.values())
    # each step made the prediction shorter
    totals = [plan_quick(SUITES, lambda _s, k=k: context(k), SLOW, POLICY, defaults, 1e9).total_s for k in range(3)]
    assert totals[0] > totals[1] > totals[2] == pytest.approx(plan.total_s)
    # the first level that fits is taken
    assert plan_quick(SUITES, context, SLOW, POLICY, defaults, target_s=totals[1]).shrink == 1


def test_shrinking_is_for_quick_runs_only() -> None:
    ctx = context(2, quick=False)
    assert peak_buffer_bytes(ctx) == PEAK_BUFFER_BYTES and sweep_buffer_bytes(ctx) == 256 * MIB


def test_a_quick_run_on_a_slow_machine_plans_budgets_so_no_case_is_cut(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A fake clock makes every case take its predicted seconds at rates so slow that the default
    quick budget runs out after a case or two: the planned budgets let every case run; the same run
    held to the default budget (named with --budget, which turns the planning off) is cut."""
    slow = Rates(device_gbps=1e-6, device_gflops=1e-3, host_write_gbps=1e-6, host_check_gbps=1e-6)
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    monkeypatch.setattr(roofline_runner, "probe_rates", lambda ctx: slow)
    fake.max_pipeline = 1024
    seconds: Dict[str, List[float]] = {}

    def spent(self: SuiteClock) -> bool:  # elapsed: the predicted seconds of the cases measured so far
        return self.budget_s > 0 and sum(seconds[self.suite][: self.measured]) >= self.budget_s

    monkeypatch.setattr(SuiteClock, "spent", spent)

    def run(budget: Any) -> Any:
        opts = RunOptions(
            device="cuda:0", suites=["stream"], quick=True, reps=2, array_bytes=4096, telemetry=False, budget=budget
        )
        r = roofline_runner.RooflineRunner(opts, journal=Journal(tmp_path / f"{budget}.jsonl"))
        policy = Policy(opts.reps, opts.max_warmup_s)
        seconds["stream"] = [case_seconds(w, slow, policy) for w in registry.case_work("stream", r.ctx)]
        return r.run()

    planned = run(None)
    (t,) = planned.suite_times
    assert not t.cut and t.measured == t.planned == 4
    assert t.budget_s >= sum(seconds["stream"]) > default_budgets(quick=True)["stream"]
    assert planned.device["quick_plan"]["predicted_s"]["stream"] == pytest.approx(sum(seconds["stream"]), abs=0.01)
    held = run(f"stream={default_budgets(quick=True)['stream']:g}")
    assert held.suite_times[0].cut and held.suite_times[0].measured < 4 and "quick_plan" not in held.device


def test_the_plan_line_says_the_predicted_seconds_and_budgets() -> None:
    from apple_roofline.cli.progress import plan_words
    from apple_roofline.study.progress import announce_plan

    assert plan_words(["stream", "gemm"], [12.0, 30.0], [5.5, 0.0]) == (
        "[all] predicted about 6 s: stream 5.5 s (budget 12)"
    )
    assert plan_words(["stream"], [10.0], []) == ""
    calls: List[tuple] = []

    class TwoArgs:  # a display that takes no prediction still gets its plan
        def plan(self, stages: Any, budgets: Any) -> None:
            calls.append((stages, budgets))

    announce_plan(TwoArgs(), ["stream"], [10.0], [0.0])
    assert calls == [(["stream"], [10.0])]


def test_every_default_suite_with_kernels_on_a_cpu_describes_its_cases() -> None:
    """gemm (its ladder stops at a launch time: bounded by its own rule) and matrix (no CPU kernel)
    keep their default budgets; every other default suite is predicted."""
    described = {s.name for s in registry.specs() if s.default and registry.case_work(s.name, context()) != ()}
    assert described >= {"stream", "sweep", "peak"}


def test_a_resumed_quick_run_keeps_its_plan_and_every_kept_measurement(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """``run --quick``, Ctrl-C, ``--resume`` (issue 45): the resumed run's probe would read a machine
    so slow that the grid shrinks (the sweep's n falls, the peak's buffers too), but the plan is the
    journal's: no probe runs, every measurement the journal holds is kept, none is measured again,
    and no warning says one was dropped."""
    fake.max_pipeline, fake.llc_bytes = 1024, 64 << 10
    rates = [Rates(1e3, 1e5, 1e3, 1e3)]  # what each probe reads, the last one again
    probes: List[Rates] = []

    def probe(ctx: Any) -> Rates:
        probes.append(rates[min(len(probes), len(rates) - 1)])
        return probes[-1]

    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    monkeypatch.setattr(roofline_runner, "probe_rates", probe)
    opts = RunOptions(
        device="cuda:0", suites=["stream", "sweep", "peak"], quick=True, reps=2, array_bytes=2 << 20, telemetry=False
    )
    measure_suite = roofline_runner.RooflineRunner.measure_suite

    def interrupted(self: Any, name: str) -> None:  # Ctrl-C as the peak suite starts
        if name == "peak":
            raise KeyboardInterrupt
        measure_suite(self, name)

    monkeypatch.setattr(roofline_runner.RooflineRunner, "measure_suite", interrupted)
    with pytest.raises(roofline_runner.RunInterrupted) as info:
        roofline_runner.RooflineRunner(opts, journal=Journal(journal_path(tmp_path, "run"))).run()
    first = info.value.partial
    assert first.device["quick_plan"]["shrink_steps"] == []
    kept = read_journal(journal_path(tmp_path, "run"), Run)
    assert len(kept.records) == len(first.measurements) == 4 + 12  # stream's four, the sweep's twelve
    rates.append(Rates(1e-6, 1e-3, 1e-6, 1e-6))  # a probe now would shrink the grid: the sweep's n falls
    monkeypatch.setattr(roofline_runner.RooflineRunner, "measure_suite", measure_suite)
    again = roofline_runner.RooflineRunner(opts, journal=Journal(resume=kept)).run()
    assert again.resumed is not None and again.resumed["measurements"] == list(kept.records)
    assert again.device["quick_plan"] == first.device["quick_plan"]
    assert [m.params["n"] for m in again.measurements if m.suite == "sweep"] == [
        m.params["n"] for m in first.measurements if m.suite == "sweep"
    ]
    assert not [w for w in again.warnings if "were not used" in w]
    assert len(probes) == 1  # the resumed run measured no rates


def test_a_resumed_run_names_the_kept_measurements_it_did_not_use(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A journal holding a measurement this run has no case for (a journal without a quick plan,
    planned again onto another grid): the run says how many it did not use, which, and why."""
    fake.max_pipeline = 1024
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    monkeypatch.setattr(roofline_runner, "probe_rates", lambda ctx: Rates(1e3, 1e5, 1e3, 1e3))
    opts = RunOptions(device="cuda:0", suites=["stream"], quick=True, reps=2, array_bytes=4096, telemetry=False)
    path = journal_path(tmp_path, "run")
    roofline_runner.RooflineRunner(opts, journal=Journal(path)).run()
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    del head["quick_plan"]  # an earlier version's journal
    moved = json.loads(lines[1])
    moved["key"] = moved["key"].replace('"n":', '"n":7')  # a case of another grid, and its record
    moved["record"]["params"]["n"] = int("7" + str(moved["record"]["params"]["n"]))
    path.write_text("\n".join([json.dumps(head), json.dumps(moved), *lines[2:]]) + "\n")
    again = roofline_runner.RooflineRunner(opts, journal=Journal(resume=read_journal(path, Run))).run()
    (warning,) = [w for w in again.warnings if "were not used" in w]
    assert warning.startswith("1 of the 4 measurements the resumed journal holds were not used")
    assert "holds no quick plan" in warning and moved["key"] in warning
    assert again.device["quick_plan"]["budgets_s"]["stream"] > 0  # planned again, and recorded
