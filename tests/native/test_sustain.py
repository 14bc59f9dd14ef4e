"""``run --sustain`` on the CPU backend: the window reaches every measurement (docs/design/power.md,
"Clocks and power")."""

from __future__ import annotations

from typing import Any, List

import pytest


def test_run_sustain_sets_every_measurements_minimum_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_roofline(sustain_s=...)`` (``run --sustain``): every measurement is timed with at least
    that window, with or without a power sensor; the run records it."""
    from apple_roofline.roofline.run import cases
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    seen: List[float] = []
    real = cases.time_kernel

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw.get("min_window_s", 0.0))
        kw["min_window_s"] = 0.0  # keep the test fast: the window itself is tested above
        return real(*args, **kw)

    monkeypatch.setattr(cases, "time_kernel", spy)
    run = run_roofline(
        RunOptions(
            device="cpu", suites=["stream"], quick=True, reps=3, array_bytes=1 << 20, telemetry=False, sustain_s=1.5
        )
    )
    # one timing per measurement, and one more for each sample set measured again for its noise
    # (docs/design/measurement.md, "Noisy samples"): every one with the window
    again = sum(1 for m in run.measurements if "remeasured_cv" in m.params)
    assert seen and all(w == 1.5 for w in seen) and len(seen) == len(run.measurements) + again
    assert run.device["sustain_s"] == 1.5
    with pytest.raises(ValueError, match=r"sustain_s 61 is out of range \(valid: 0 to 60 seconds\)"):
        run_roofline(RunOptions(device="cpu", suites=["stream"], sustain_s=61))
