"""Suite time budgets on the CPU backend (docs/design/budgets.md, "Time budgets"): a spent budget stops its
suite before the next case, the run says so, and the other suites are unaffected."""

from __future__ import annotations

import pytest


def test_a_spent_budget_cuts_its_suite_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.views.report import to_markdown
    from apple_roofline.study import timing

    # The stream suite's budget is spent once its first case is measured; peak keeps the default.
    real_spent = timing.SuiteClock.spent
    monkeypatch.setattr(
        timing.SuiteClock, "spent", lambda self: self.suite == "stream" and self.measured >= 1 or real_spent(self)
    )
    run = runner.run_roofline(
        RunOptions(
            device="cpu",
            suites=["stream", "peak"],
            quick=True,
            reps=3,
            array_bytes=1 << 20,
            telemetry=False,
            budget="stream=5",
        )
    )
    stream, peak = run.suite_times
    assert (stream.suite, stream.measured, stream.cut, stream.budget_s) == ("stream", 1, True, 5.0)
    assert [m.kernel for m in run.measurements if m.suite == "stream"] == ["copy"]
    assert (
        peak.suite == "peak"
        and not peak.cut
        and peak.measured == len([m for m in run.measurements if m.suite == "peak"]) > 0
    )
    assert any("suite stream was cut short" in w for w in run.warnings)
    assert "cut short by its budget" in to_markdown(run)


def test_budgets_are_off_for_sustained_runs_and_recorded() -> None:
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    run = run_roofline(
        RunOptions(device="cpu", suites=["stream"], quick=True, reps=3, array_bytes=1 << 20, telemetry=False)
    )
    (t,) = run.suite_times
    assert t.budget_s > 0 and t.measured == 4 and not t.cut and t.seconds > 0
    # --power-window lengthens every measurement: no budget unless one is given
    (t,) = run_roofline(
        RunOptions(
            device="cpu", suites=["stream"], quick=True, reps=3, array_bytes=1 << 20, telemetry=False, power_window=True
        )
    ).suite_times
    assert t.budget_s == 0 and not t.cut
    (t,) = run_roofline(
        RunOptions(
            device="cpu",
            suites=["stream"],
            quick=True,
            reps=3,
            array_bytes=1 << 20,
            telemetry=False,
            power_window=True,
            budget="stream=50",
        )
    ).suite_times
    assert t.budget_s == 50
    with pytest.raises(ValueError, match="budget 'idiv' is not a suite of this run"):
        run_roofline(RunOptions(device="cpu", suites=["stream"], budget="idiv=3"))


def test_a_quick_run_plans_its_budgets_from_rates_measured_on_the_cpu() -> None:
    """The probe runs on the real CPU backend and the plan reaches the suites' clocks: each
    described suite's budget is at least its default quick one and at least twice its prediction."""
    from apple_roofline.roofline.run.budget import default_budgets
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.quick_plan import QUICK_MARGIN
    from apple_roofline.roofline.run.runner import run_roofline

    run = run_roofline(
        RunOptions(device="cpu", suites=["stream", "peak"], quick=True, reps=3, array_bytes=1 << 20, telemetry=False)
    )
    plan = run.device["quick_plan"]
    assert set(plan["rates"]) == {"device_gbps", "device_gflops", "host_write_gbps", "host_check_gbps"}
    assert all(v > 0 for v in plan["rates"].values()) and set(plan["predicted_s"]) == {"stream", "peak"}
    for t in run.suite_times:
        assert t.budget_s >= default_budgets(quick=True)[t.suite]
        assert t.budget_s >= QUICK_MARGIN * plan["predicted_s"][t.suite] - 0.01  # the record rounds
    assert not any(t.cut for t in run.suite_times) and run.suite_times[0].measured == 4
    # a default run neither probes nor plans
    assert (
        "quick_plan"
        not in run_roofline(
            RunOptions(device="cpu", suites=["stream"], reps=3, array_bytes=1 << 20, telemetry=False)
        ).device
    )
