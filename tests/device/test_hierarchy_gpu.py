"""Device tier, the hierarchy suite on a GPU (CUDA or Metal, whichever this build has a device of):
the default run's form measures every kernel, every output matches the NumPy reference, and each
documented cache level and shared memory get a ceiling with its working sets, none of them the
default bandwidth (docs/design/hierarchy.md, "The memory hierarchy"). Skips without a GPU."""

from __future__ import annotations

from typing import List

import pytest

_core = pytest.importorskip("apple_roofline._native")._core

_GPUS: List[str] = [
    f"{b['name']}:0" for b in _core.backends() if b["name"] in ("cuda", "metal") and b["compiled"] and b["devices"] > 0
]
if not _GPUS:
    pytest.skip("no CUDA or Metal device", allow_module_level=True)


@pytest.mark.parametrize("device", _GPUS)
def test_the_default_form_gives_a_ceiling_per_level(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions

    monkeypatch.setattr(runner.registry, "default_suites", lambda: ("stream", "hierarchy"))
    # STREAM at its default size (4x the last-level cache or more): DRAM, the model's default bandwidth
    # (64 MiB arrays on an H100, whose L2 is 50 MiB, made STREAM's ceiling "Cache bandwidth")
    run = runner.run_roofline(RunOptions(device=device, suites=None, quick=True, telemetry=False))
    assert all(m.valid for m in run.measurements), [m.validation for m in run.measurements if not m.valid]
    kernels = {m.kernel for m in run.measurements if m.suite == "hierarchy"}
    assert kernels == {"read", "rmw", "shared"}
    documented = [lv["name"] for lv in run.device["cache_levels"]["levels"] if lv["name"] != "Shared memory"]
    levels = {c.name for c in run.ceilings if c.is_level and c.source == "measured"}
    assert levels == {f"{n} bandwidth" for n in documented} | {"Shared memory bandwidth"}
    measured = [c for c in run.ceilings if c.kind == "bandwidth" and c.source == "measured"]
    assert min(measured, key=lambda c: (c.is_level, -c.value)).name == "DRAM bandwidth"  # the model's default


@pytest.mark.parametrize("device", _GPUS)
def test_the_full_sweep_finds_the_last_cache_and_dram(device: str) -> None:
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline
    from apple_roofline.suites.hierarchy.levels import level_curves

    run = run_roofline(RunOptions(device=device, suites=["hierarchy"], quick=True, telemetry=False))
    assert all(m.valid for m in run.measurements)
    read = next(c for c in level_curves(run.measurements) if c.kernel == "read")
    if not read.levels:
        pytest.skip(f"{run.device_name} has no documented cache size to name a plateau by")
    names = [p.level for p in read.plateaus]
    assert names[-1] == "DRAM" and read.levels and names[-2] == read.levels[-1].name, names
