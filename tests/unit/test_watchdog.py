"""The bounds of device waits (docs/design/watchdog.md, "A watchdog on every device wait"): the bound of a
pass from its predicted time, the calling thread's limit (Python's and the extension's), a bounded
wait, the error a stopped device raises, how a runner's partial study carries it, and how the
command line ends (exit 1, the message, the partial study written)."""

from __future__ import annotations

import dataclasses
import pickle
import threading
from pathlib import Path
from typing import Any, List, Tuple

import numpy as np
import pytest
import typer

from apple_roofline.cli import common, signals
from apple_roofline.errors import DeviceStopped
from apple_roofline.graphics import pacing as P
from apple_roofline.roofline import Run
from apple_roofline.study.progress import StudyInterrupted
from apple_roofline.telemetry import NullSampler
from apple_roofline.timing import watchdog as W
from conftest import build_m5_run


def test_the_bound_is_ten_times_the_prediction_between_the_floor_and_the_cap() -> None:
    assert W.bound_for(1.0) == 10.0
    assert W.bound_for(1e-6) == W.FLOOR_S == 2.0
    assert W.bound_for(10.0) == W.CAP_S == 60.0
    assert W.bound_for(45.0) == 90.0  # a pass predicted past half the cap (run --sustain): twice its time
    for unknown in (None, 0.0, -1.0, float("nan"), float("inf")):
        assert W.bound_for(unknown) == W.CAP_S


def test_a_bounded_wait_returns_when_set_and_raises_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    done = threading.Event()
    done.set()
    W.wait_event(done, "a read-back")  # returns at once
    monkeypatch.setattr(W, "FLOOR_S", 0.1)
    with W.watched("fill rgba8unorm", 1e-6):
        with pytest.raises(DeviceStopped) as info:
            W.wait_event(threading.Event(), "a read-back")
    assert info.value.pass_name == "fill rgba8unorm" and info.value.bound_s == 0.1
    monkeypatch.setattr(W, "CAP_S", 0.1)
    with pytest.raises(DeviceStopped, match="a read-back did not finish"):  # outside watched: what it waited for
        W.wait_event(threading.Event(), "a read-back")


def test_device_stopped_pickles_with_its_fields() -> None:
    e = pickle.loads(pickle.dumps(DeviceStopped("kernel hang_spin", 2.0)))
    assert (e.pass_name, e.bound_s, str(e)) == ("kernel hang_spin", 2.0, str(DeviceStopped("kernel hang_spin", 2.0)))


def test_a_runners_partial_study_carries_the_stop_among_its_warnings() -> None:
    partial = dataclasses.replace(build_m5_run(complete=False), warnings=("before",))
    stop = DeviceStopped("kernel x", 2.0)
    stopped = StudyInterrupted(partial, stop)
    assert stopped.stopped is stop and stopped.partial.warnings == ("before", str(stop))
    interrupted = StudyInterrupted(partial, KeyboardInterrupt())
    assert interrupted.stopped is None and interrupted.partial is partial


def test_the_command_line_writes_the_partial_study_and_exits_1_after_a_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(signals, "_ending", [])
    stop = DeviceStopped("fillrate rgba8unorm F=0", 2.0)
    partial = StudyInterrupted(build_m5_run(complete=False), stop)

    def runner(progress: Any) -> Any:
        raise partial

    with pytest.raises(typer.Exit) as info:
        common.measure_study(runner, "run.json", tmp_path)
    assert info.value.exit_code == common.EXIT_FAILED
    assert f"error: {stop}: partial results written to {tmp_path / 'run.json'}" in capsys.readouterr().err
    written = Run.load(tmp_path / "run.json")
    assert written.complete is False and str(stop) in written.warnings
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no report or figure: seconds to draw
    assert signals.ending_now()  # main() then leaves at once (os._exit), not through the device's release


def test_a_pass_waits_within_the_bound_of_its_predicted_submission() -> None:
    """Pacer.measure: the submission's predicted seconds are (lead + batch x reps + the counting and
    stored passes) x the per-pass time; the probe, whose time is unknown, has the cap."""
    limits: List[Tuple[float, str]] = []

    class Pass:
        def time(self, args: Any, work_items: int, batch: int, reps: int, clock: bool = True) -> List[float]:
            limits.append(W.limit())
            return [1e-3 * batch] * reps

        def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> P.PassRun:
            limits.append(W.limit())
            predicted = (lead + batch * reps + (2 if count else 1)) * 1e-3
            assert W.limit() == (W.bound_for(predicted), "fill F=0")
            return P.PassRun([1e-3 * batch] * reps, None, np.zeros(1) if read else None)

    pacer = P.Pacer(NullSampler("test"), reps=3, min_sample_s=0.01, spin_up_s=0.25)
    pacer.measure(Pass(), "shape", None, count=True, name="fill F=0")
    assert limits[0] == (W.CAP_S, "fill F=0 (probe)") and limits[1][1] == "fill F=0"
    assert W.limit() == (W.CAP_S, "")


def test_a_first_pass_that_never_ends_on_nvidia_vulkan_says_what_is_known() -> None:
    """The hint is for an NVIDIA GPU through Vulkan only, and travels in the error's message and
    through pickling (node children send their errors to the parent)."""
    import pickle

    from apple_roofline.errors import DeviceStopped
    from apple_roofline.graphics.wedged import WEDGED_GPU_HINT, wedged_gpu_suspected

    assert wedged_gpu_suspected({"wgpu_backend": "Vulkan", "name": "NVIDIA H200"})
    assert not wedged_gpu_suspected({"wgpu_backend": "Vulkan", "name": "llvmpipe (LLVM 15.0.6, 256 bits)"})
    assert not wedged_gpu_suspected({"wgpu_backend": "Metal", "name": "Apple M4"})
    exc = DeviceStopped("fillrate rgba8unorm F=0 opaque store (probe)", 60.0, WEDGED_GPU_HINT)
    assert str(exc).endswith("(still running on the device); " + WEDGED_GPU_HINT)
    again = pickle.loads(pickle.dumps(exc))
    assert str(again) == str(exc) and again.hint == WEDGED_GPU_HINT
    assert str(DeviceStopped("p", 2.0)).endswith("(still running on the device)")
