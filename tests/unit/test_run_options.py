"""A roofline run's options in one object (roofline/run/options.py): checked when built, recorded once
(the journal's header and the results header come from it), and the runner that takes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apple_roofline.devices import DeviceSpec
from apple_roofline.errors import OptionError
from apple_roofline.roofline.run import runner as roofline_runner
from apple_roofline.roofline.run.options import OPTION_FLAGS, RunOptions
from apple_roofline.study.journal import Journal
from apple_roofline.suites import registry
from apple_roofline.suites.gemm.sizes import QUICK_SIZES, SIZES_OPTION
from test_tuning import FakeBackend, fake  # noqa: F401  (tests/unit is on the path; the fake device)


def test_options_are_checked_and_normalised_when_built() -> None:
    opts = RunOptions(suites="peak, stream,peak", reps=3, sustain_s="1.5", command=["apple-roofline", "run"])  # type: ignore[arg-type]
    assert opts.suites == ("stream", "peak") and opts.suite_names == ("stream", "peak")
    assert opts.sustain_s == 1.5 and opts.command == ("apple-roofline", "run")
    assert opts.budgets_s == {"stream": 0.0, "peak": 0.0}  # --sustain lengthens every measurement: no budget
    assert RunOptions().suite_names == registry.default_suites() and RunOptions().suites is None
    assert RunOptions(quick=True).max_warmup_s < RunOptions().max_warmup_s
    for kw, match in [
        ({"reps": 0}, r"reps 0 is out of range \(valid: 1 to 10000\)"),
        ({"suites": "stream,foo"}, r"suites 'foo' is not a suite"),
        ({"sustain_s": 61}, r"sustain_s 61 is out of range \(valid: 0 to 60 seconds\)"),
        ({"suites": ["stream"], "budget": "gemm=1"}, r"'gemm' is not a suite of this run"),
    ]:
        with pytest.raises(OptionError, match=match):
            RunOptions(**kw)


def test_the_results_header_takes_its_options_from_what_the_journal_records() -> None:
    opts = RunOptions(suites=["stream"], quick=True, reps=7, sustain_s=2.0)
    recorded = opts.recorded(1 << 20)
    assert set(OPTION_FLAGS) <= set(recorded) and recorded["suites"] == ["stream"] and recorded["reps"] == 7
    assert opts.header(1 << 20) == {"array_bytes": 1 << 20, "quick": True, "reps": 7, "sustain_s": 2.0}
    assert "sustain_s" not in RunOptions().header(4096) and "tune" not in RunOptions().header(4096)


def test_a_run_writes_the_options_once_into_its_journal_and_its_header(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    fake.max_pipeline = 1024
    opts = RunOptions(device="cuda:0", suites=["stream"], reps=2, array_bytes=4096, telemetry=False)
    path = tmp_path / "run.journal.jsonl"
    run = roofline_runner.RooflineRunner(opts, journal=Journal(path)).run()
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["options"] == json.loads(json.dumps(opts.recorded(4096)))
    assert {k: run.device[k] for k in opts.header(4096)} == opts.header(4096)
    keys = [json.loads(ln)["key"] for ln in lines[1:]]
    assert len(keys) == len(run.measurements) == len(set(keys)) == 4  # each measurement once, as measured


def test_a_runner_assembles_before_it_has_measured_anything(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The power window is the runner's own state, set to 0 until the sampler starts: a run
    interrupted before its first suite still assembles (its closure once read it before assignment)."""
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    r = roofline_runner.RooflineRunner(
        RunOptions(device="cuda:0", suites=["stream"], reps=2, array_bytes=4096, telemetry=False, power_window=True)
    )
    partial = r.assemble(False)
    assert partial.complete is False and partial.measurements == ()
    assert "power_window_s" not in partial.device["telemetry"] and partial.device["reps"] == 2


def test_an_interrupt_inside_a_suite_keeps_what_the_journal_kept(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """measure_suite_cases yields each measurement before its progress line: a Ctrl-C in the progress
    display after the journal kept a measurement leaves it in the partial run too."""
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    fake.max_pipeline = 1024

    class Interrupting:
        def start(self, stage: str, total: int) -> None:
            pass

        def advance(self, description: str) -> None:
            if "scale" in description:
                raise KeyboardInterrupt

        def finish(self, stage: str) -> None:
            pass

    path = tmp_path / "run.journal.jsonl"
    progress: Any = Interrupting()
    with pytest.raises(roofline_runner.RunInterrupted) as exc:
        roofline_runner.RooflineRunner(
            RunOptions(device="cuda:0", suites=["stream"], array_bytes=4096, reps=2, telemetry=False),
            progress=progress,
            journal=Journal(path),
        ).run()
    kept = [json.loads(ln)["key"] for ln in path.read_text(encoding="utf-8").splitlines()[1:]]
    assert [m.kernel for m in exc.value.partial.measurements] == ["copy", "scale"] and len(kept) == 2


def test_a_quick_run_gives_the_gemm_suite_its_coarser_ladder(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--quick passes the GEMM suite the sizes 64, 256, 1024, 4096 and its shorter launch budget;
    a default run passes no sizes (the suite's own ladder, 16 … 8192)."""
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    for quick in (False, True):
        opts = RunOptions(
            device="cuda:0", suites=["gemm"], quick=quick, reps=2, array_bytes=4096, telemetry=False, budget="none"
        )
        options = roofline_runner.RooflineRunner(opts).ctx.options
        assert options.get(SIZES_OPTION) == (QUICK_SIZES if quick else None)
        assert options["gemm_max_launch_s"] == (0.03 if quick else 0.25)


def test_each_suite_starts_after_the_cyclic_garbage_of_the_suites_before_is_collected(
    fake: FakeBackend,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An object the first suite left in a reference cycle (here one that holds a buffer of the
    device) is gone when the second suite is built, with Python's automatic collector off: the
    runner collects it between the suites, not whenever the collector's thresholds fall."""
    import gc
    import weakref

    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    fake.max_pipeline = 1024
    left: list = []
    alive_when_built: list = []
    original = registry.spec

    class Cycle:
        def __init__(self, suite: Any) -> None:
            self.suite, self.buffer = suite, fake.alloc(64)
            suite.cycle = self  # suite -> Cycle -> suite

    def spec(name: str) -> Any:
        real = original(name)

        def measure(ctx: Any) -> Any:
            alive_when_built.append([ref() is not None for ref in left])
            suite = real.measure(ctx)
            left.append(weakref.ref(Cycle(suite)))
            return suite

        return type("Spec", (), {"measure": staticmethod(measure), "name": name})()

    monkeypatch.setattr(roofline_runner.registry, "spec", spec)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        r = roofline_runner.RooflineRunner(
            RunOptions(
                device="cuda:0", suites=["stream", "peak"], reps=2, array_bytes=4096, telemetry=False, budget="none"
            )
        )
        r.run()
        assert alive_when_built == [[], [False]]
        assert left[0]() is None and left[1]() is not None  # the last suite's cycle waits for the next collection
    finally:
        if was_enabled:
            gc.enable()
