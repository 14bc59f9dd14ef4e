"""Progress a person can follow, and noisy sample sets (issue 32; docs/design/measurement.md, "Progress" and
"Noisy samples"): the overall "suite k of n" with the time left, counts that end where they say,
what a stage is doing before its first step ends, only the rates that apply, one measurement of a
noisy kernel more, and one summary line for the CV warnings."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pytest

from apple_roofline.cli import progress as cli_progress
from apple_roofline.cli.progress import CliProgress, clock_text, time_left
from apple_roofline.cli.run import summed_warnings
from apple_roofline.devices import DeviceSpec
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run import case_loop
from apple_roofline.roofline.run import runner as roofline_runner
from apple_roofline.roofline.run.case_loop import rate_words
from apple_roofline.roofline.run.options import RunOptions
from apple_roofline.roofline.run.runner import cv_warnings
from apple_roofline.study.records import REMEASURED_PARAM, Measurement
from apple_roofline.timing.stats import CV_WARN, NOISY_CV
from test_tuning import FakeBackend, fake  # noqa: F401  (tests/unit is on the path; the fake device)


def _m(
    kernel: str = "triad",
    samples: Sequence[float] = (1.0,) * 10,
    flops: int = 0,
    bytes_: int = 1 << 20,
    kind: str = "bandwidth",
    **params: Any,
) -> Measurement:
    return Measurement(
        suite="stream",
        kernel=kernel,
        dtype="fp32",
        params={"n": 1024, **params},
        flops=flops,
        bytes=bytes_,
        samples_s=tuple(samples),
        valid=True,
        ceiling_class="DRAM bandwidth",
        ceiling_kind=kind,
    )


# -- the time left and the plain lines ---------------------------------------------------------------


def test_time_left_is_the_current_rate_capped_by_its_budget_plus_the_later_budgets() -> None:
    budgets = [30.0, 60.0, 90.0]
    assert time_left(budgets, 0, 0.0, 0, 4) == 30 + 60 + 90  # nothing done yet: this suite's budget
    assert time_left(budgets, 0, 10.0, 2, 4) == 10 + 60 + 90  # 5 s a step, 2 steps left
    assert time_left(budgets, 0, 25.0, 1, 4) == 5 + 60 + 90  # the rate says 75 s, the budget 5
    assert time_left(budgets, 2, 10.0, 5, 5) == 0.0  # the last step of the last suite
    assert time_left([30.0, 0.0], 0, 1.0, 1, 2) is None  # a suite ahead has no budget: no bound
    assert time_left([0.0], 0, 1.0, 0, 2) is None  # no step done and no budget: nothing to go on
    assert time_left([0.0], 0, 2.0, 1, 3) == 4.0  # the rate alone
    assert [clock_text(s) for s in (0, 0.2, 59.5, 61, 3725)] == ["0:00", "0:01", "1:00", "1:01", "1:02:05"]


def test_plain_progress_says_the_suite_of_the_plan_and_ends_at_the_steps_taken(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_progress.time, "monotonic", lambda: 100.0)  # no time passes
    with CliProgress(rich=False) as p:
        p.plan(["gemm", "hierarchy"], [30.0, 20.0])
        p.start("gemm", 30)
        p.doing("allocating")  # no line in a log
        for i in range(17):
            p.advance(f"gemm/sgemm/fp32 m={16 << i}: 1.0 GFLOP/s")
        p.finish("gemm")
        p.start("hierarchy", 9)
        p.advance("hierarchy/read/u32 level=L1d: 400 GB/s")
        p.finish("hierarchy")
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == ["[all] suite 1 of 2: gemm, up to 0:50 left", "[gemm] up to 30 steps"]
    assert lines[2] == "[gemm] 1/30 gemm/sgemm/fp32 m=16: 1.0 GFLOP/s"
    assert lines[19] == "[gemm] done: 17 steps"  # not "17/30" as the last word on it
    assert lines[20:] == [
        "[all] suite 2 of 2: hierarchy, up to 0:20 left",
        "[hierarchy] up to 9 steps",
        "[hierarchy] 1/9 hierarchy/read/u32 level=L1d: 400 GB/s",
        "[hierarchy] done: 1 step",
    ]


def test_rich_bars_end_at_the_steps_taken_and_show_the_suite_of_the_plan() -> None:
    p = CliProgress(rich=True)
    p.plan(["stream", "gemm"], [30.0, 0.0])
    p.start("stream", 4)
    overall = p._bar.tasks[0]  # the bar over the suites comes first
    assert overall.total == 2 and overall.description == "suite 1 of 2: stream"  # gemm has no budget: no time
    p.doing("allocating and writing stream's inputs")
    suite = p._bar.tasks[1]
    assert suite.description == "allocating and writing stream's inputs" and suite.completed == 0
    p.advance("stream/copy/fp32: 13.8 GB/s")
    p.finish("stream")
    assert (suite.completed, suite.total) == (1, 1) and overall.completed == 1
    p.start("gemm", 30)
    for _ in range(3):
        p.advance("x")
    p.finish("gemm")
    assert (p._bar.tasks[2].completed, p._bar.tasks[2].total) == (3, 3)
    assert overall.completed == 2 and overall.description == "done"
    p.close()


# -- the rates that apply, and the warnings ----------------------------------------------------------


def test_a_progress_line_names_only_the_rates_that_apply() -> None:
    assert rate_words(_m(samples=(1e-3,) * 10)) == "1.0 GB/s"  # a copy counts no FLOPs
    assert rate_words(_m(samples=(1e-3,) * 10, flops=10**6)) == "1.0 GB/s"  # a triad's are not its rate
    peak = _m(samples=(1e-3,) * 10, flops=10**8, bytes_=1000, kind="compute")
    assert rate_words(peak) == "100.0 GFLOP/s"  # its few bytes say nothing
    sweep = dataclasses.replace(_m(samples=(1e-3,) * 10, flops=10**8), ceiling_kind=None, ceiling_class=None)
    assert rate_words(sweep) == "100.0 GFLOP/s, 1.0 GB/s"


def test_cv_warnings_and_their_one_summary_line(tmp_path: Path, m5_run: Run) -> None:
    steady = _m("copy")
    noisy = _m("scale", samples=(1.0,) * 9 + (1.5,))
    very = _m("add", samples=(1.0,) * 8 + (10.0, 10.0), **{REMEASURED_PARAM: 0.9})
    assert CV_WARN < noisy.cv <= NOISY_CV < very.cv and very.noisy and not noisy.noisy
    warnings = cv_warnings([steady, noisy, very])
    assert warnings == [
        f"stream/scale/fp32 n=1024: CV {noisy.cv:.1%} > 5% (noisy samples)",
        f"stream/add/fp32 n=1024: CV {very.cv:.1%} > 50%, and 90.0% the first time (noisy even when measured twice)",
    ]
    run = dataclasses.replace(m5_run, measurements=(steady, noisy, very), warnings=("other", *warnings))
    assert summed_warnings(run, tmp_path) == [
        "other",
        f"2 measurements with noisy samples (CV > 5%), 1 of them above 50% even when measured twice "
        f"(marked noisy): see the Warnings table of {tmp_path / 'report.md'} or report.html",
    ]
    # the ceiling it sets, and its row in the report, say so
    from apple_roofline.roofline.model.model import derive_ceilings
    from apple_roofline.roofline.views.tables import suite_tables

    (ceiling,) = derive_ceilings([dataclasses.replace(very, samples_s=tuple(s / 10 for s in very.samples_s))])
    assert ceiling.from_.endswith(f"(median of 10; noisy samples, CV {very.cv:.0%})")
    rows = suite_tables([steady, very])[0].table.rows
    assert rows[0][6] == "0 %" and rows[1][6].endswith("% (noisy)") and rows[1][7] == "yes"


# -- the runner: what it announces, and a noisy kernel measured again --------------------------------


class Recorder:
    """A progress that keeps every call, with the optional plan and doing."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    def plan(self, stages: Sequence[str], budgets_s: Sequence[float]) -> None:
        self.calls.append(("plan", (list(stages), list(budgets_s))))

    def start(self, stage: str, total: int) -> None:
        self.calls.append(("start", (stage, total)))

    def doing(self, description: str) -> None:
        self.calls.append(("doing", description))

    def advance(self, description: str) -> None:
        self.calls.append(("advance", description))

    def finish(self, stage: str, note: str = "") -> None:
        self.calls.append(("finish", stage))


@pytest.mark.parametrize("second_noisy", [False, True])
def test_a_noisy_kernel_is_measured_once_more(
    fake: FakeBackend,  # noqa: F811 (pytest's fixture, imported from test_tuning above to be found)
    monkeypatch: pytest.MonkeyPatch,
    second_noisy: bool,
) -> None:
    real = case_loop.time_case
    made: Dict[str, int] = {}

    def time_case(case: Any, kernel: Any, **kw: Any) -> Measurement:
        m = real(case, kernel, **kw)
        made[m.kernel] = made.get(m.kernel, 0) + 1
        if m.kernel == "copy" and (made["copy"] == 1 or second_noisy):
            m = dataclasses.replace(m, samples_s=m.samples_s[:-2] + (m.samples_s[0] * 10,) * 2)
        return m

    monkeypatch.setattr(case_loop, "time_case", time_case)
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    fake.max_pipeline = 1024  # the stream table's CUDA block
    rec = Recorder()
    run = roofline_runner.RooflineRunner(
        RunOptions(device="cuda:0", suites=["stream"], array_bytes=4096, reps=10, telemetry=False), progress=rec
    ).run()
    assert made == {"copy": 2, "scale": 1, "add": 1, "triad": 1}  # copy once more, the others once
    copy = next(m for m in run.measurements if m.kernel == "copy")
    assert copy.params[REMEASURED_PARAM] > NOISY_CV and copy.noisy is second_noisy
    assert rec.calls[0] == ("plan", (["stream"], [30.0])) and rec.calls[1] == ("start", ("stream", 4))
    assert rec.calls[2] == ("doing", "allocating and writing stream's inputs")
    doing = [c[1] for c in rec.calls if c[0] == "doing"]
    assert any(d.startswith("stream/copy/fp32") and "measuring again" in d for d in doing)
    advances = [c[1] for c in rec.calls if c[0] == "advance"]
    assert len(advances) == 4 and not any("GFLOP/s" in a for a in advances)  # bandwidth kernels: GB/s only
    assert advances[0].endswith("(noisy: CV " + f"{copy.cv:.0%})") is second_noisy
    noisy_warning = [w for w in run.warnings if w.startswith("stream/copy/fp32")]
    assert bool(noisy_warning) is second_noisy
    if second_noisy:
        assert "noisy even when measured twice" in noisy_warning[0]
