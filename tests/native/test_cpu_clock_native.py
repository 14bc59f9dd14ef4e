"""A CPU run's theoretical peaks rest on clock readings spread over it (docs/design/limits.md, "Theoretical
ceilings"): the runner reads the clock twice at the start and after each suite, drops a reading
that disagrees and recomputes the peaks from the rest. The readings are given (the host's spec and
the chain are replaced), so the test asserts the wiring, not a clock."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import pytest


def test_the_run_drops_a_stolen_reading_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.views.report import to_markdown
    from apple_roofline.theoretical import Figure, cpu_clock, host_cpu_spec

    spec = host_cpu_spec(measure_clock=lambda: 1.59e9)  # the reading a neighbour disturbed
    if not spec.clock_hz.source.startswith("measured"):
        spec = dataclasses.replace(spec, clock_hz=Figure(1.59e9, "Hz", "measured: a test reading"), core_groups=())
    later: Iterator[float] = iter([2.60e9, 2.61e9, 2.59e9, 2.60e9])
    monkeypatch.setattr(runner, "host_cpu_spec", lambda: spec)
    monkeypatch.setattr(cpu_clock, "native_clock_hz", lambda: next(later))
    run = runner.run_roofline(
        RunOptions(device="cpu", suites=["stream", "peak"], quick=True, reps=3, array_bytes=1 << 20, telemetry=False)
    )
    readings = run.device["theoretical"]["clock_readings"]["chain"]
    assert readings["dropped_hz"] == [1.59e9] and len(readings["kept_hz"]) == 3  # start, after stream, after peak
    assert run.device["theoretical"]["clock_hz"] == pytest.approx(2.60e9)
    assert any(w.startswith("CPU clock: dropped") for w in run.warnings)
    theoretical = [c for c in run.ceilings if c.source == "theoretical"]
    assert theoretical and all("2.60 GHz" in c.from_ for c in theoretical)
    assert "dropped 1.590 GHz" in to_markdown(run)
