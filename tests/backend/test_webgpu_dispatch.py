"""The dispatch study on this machine's first Vulkan, Metal or D3D12 wgpu adapter (lavapipe in CI:
.ci/run installs mesa-vulkan-drivers), at small counts: every series the WebGPU path measures is there
and valid, says its timer and its resolution, and what it cannot measure is listed as skipped with the
reason; the files are written and read back; a planted wrong count in each kernel fails validation;
a measure that outlasts its bound stops the study. Skipped, saying why, without wgpu or such an adapter."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Set, Tuple

import pytest

from apple_roofline.dispatch import DispatchStudy, format_dispatch, run_dispatch, write_study
from apple_roofline.dispatch.run.wgpu import STEPS, run_bounded
from apple_roofline.errors import DeviceStopped

#: Small counts: this machine's CPUs are shared, and lavapipe runs the kernels on them.
COUNTS = {"reps": 4, "launches": 3, "warmup": 2}


def _adapter() -> int:
    try:
        import wgpu
    except ImportError as exc:
        pytest.skip(f"wgpu is not installed ({exc})")
    for i, a in enumerate(wgpu.gpu.enumerate_adapters_sync()):
        if str(a.info.get("backend_type", "")).lower() in ("vulkan", "metal", "d3d12"):
            return i
    pytest.skip("wgpu finds no Vulkan, Metal or D3D12 adapter (apt-get install mesa-vulkan-drivers gives lavapipe)")
    raise AssertionError  # unreachable


@pytest.fixture(scope="module")
def study() -> DispatchStudy:
    pytest.importorskip("apple_roofline._native")
    return run_dispatch(f"wgpu:{_adapter()}", peers=True, **COUNTS)


def _keys(study: DispatchStudy) -> Set[Tuple[str, str, str, str, str]]:
    return {(s.kernel, s.measure, s.step, s.path, s.clock) for s in study.series}


def test_every_series_is_measured_and_valid(study: DispatchStudy) -> None:
    timestamps = bool(study.device["timestamp_query"])
    want = set()
    for kernel in ("null", "tiny"):
        want |= {(kernel, "throughput", "", "python", "host"), (kernel, "round_trip", "", "python", "host")}
        want |= {(kernel, "step", name, "python", "host") for name, _ in STEPS}
        if timestamps:
            want.add((kernel, "throughput", "", "python", "device"))
    assert _keys(study) == want
    assert study.complete and not study.warnings, study.warnings
    for s in study.series:
        assert s.valid and "floats ==" in s.validation, (s.label, s.validation)
        assert s.distribution.n == COUNTS["reps"]
        resolution = "ns per tick" if s.clock == "device" else "resolution"
        assert resolution in s.note, (s.label, s.note)
    null_counts = [s.validation for s in study.series if s.kernel == "null"]
    assert all(v.startswith("all 4 floats") for v in null_counts), null_counts  # the null kernel counts too


def test_what_wgpu_cannot_measure_is_skipped_with_its_reason(study: DispatchStudy) -> None:
    skipped = {s.path: s.reason for s in study.skipped}
    assert "C++" in skipped["native"] and "host's clock" in skipped["start_latency"]
    assert "wgpu adapter" in skipped["peers"]
    if not study.device["timestamp_query"]:
        assert "timestamp-query" in skipped["throughput (device clock)"]
    assert not [s for s in study.series if s.measure == "start_latency"]


def test_the_files_are_written_and_read_back(study: DispatchStudy, tmp_path: Path) -> None:
    written, problems = write_study(study, tmp_path)
    assert [p.name for p in written] == ["dispatch.json", "dispatch.md", "dispatch.png"] and not problems
    again = DispatchStudy.load(tmp_path / "dispatch.json")
    assert _keys(again) == _keys(study) and again.skipped == study.skipped
    md = format_dispatch(study)
    assert "Medians of the python path's steps" in md and "no C++ loop" in md


def _planted(monkeypatch: pytest.MonkeyPatch) -> None:
    """dispatch.wgsl with each kernel adding 2 to one of its floats instead of 1."""
    from apple_roofline import shaders

    real = shaders.resolve

    def resolve(name: str, entry: str) -> Tuple[str, str]:
        text, got = real(name, entry)
        if name == "dispatch.wgsl":
            planted = text.replace("x[0] += vec4<f32>(1.0);", "x[0] += vec4<f32>(1.0, 1.0, 2.0, 1.0);")
            planted = planted.replace("v.w += 1.0;", "v.w += 2.0;")
            assert planted.count("2.0") == 2, "the planted lines are no longer in dispatch.wgsl"
            text = planted
        return text, got

    monkeypatch.setattr(shaders, "resolve", resolve)


def test_a_planted_wrong_count_fails_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("apple_roofline._native")
    index = _adapter()
    _planted(monkeypatch)
    study = run_dispatch(f"wgpu:{index}", peers=False, reps=2, launches=2, warmup=1)
    assert study.series and not [s.label for s in study.series if s.valid]
    assert all("!=" in s.validation for s in study.series), [s.validation for s in study.series]
    assert any("warm-up" in w for w in study.warnings), study.warnings


def test_a_measure_past_its_bound_stops_the_study() -> None:
    """run_bounded's wait ends at the watchdog's bound (its floor, 2 s) while the measure still runs."""
    release = threading.Event()

    def stuck() -> Any:
        release.wait(30)

    with pytest.raises(DeviceStopped, match="a stuck pass"):
        run_bounded(stuck, "a stuck pass", 0.001)
    release.set()
    assert run_bounded(lambda: 7, "a quick pass", None) == 7
    with pytest.raises(ValueError, match="raised on its thread"):
        run_bounded(lambda: int("raised on its thread"), "a failing pass", None)


def test_device_samples_past_a_query_set_take_several_query_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    """WebGPU's query sets hold 4096 timestamps: the device-clock samples of one Kernel.time call take
    a query set per QUERY_SET_SAMPLES samples (here 2, so 5 samples take three), every sample kept and
    validated."""
    from apple_roofline.webgpu import kernel as wgpu_kernel

    pytest.importorskip("apple_roofline._native")
    index = _adapter()
    monkeypatch.setattr(wgpu_kernel, "QUERY_SET_SAMPLES", 2)
    study = run_dispatch(f"wgpu:{index}", peers=False, reps=5, launches=2, warmup=1)
    if not study.device["timestamp_query"]:
        pytest.skip("the adapter has no timestamp-query")
    device = [s for s in study.series if s.clock == "device"]
    assert len(device) == 2 and all(s.valid and s.distribution.n == 5 for s in device), device
    assert all("10 launches" in s.validation for s in device)  # 5 samples of 2 dispatches, counted
