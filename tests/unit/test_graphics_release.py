"""GPU objects of the graphics study are freed by reference counting on the thread that drops them,
never left to Python's cycle collector, which runs on whichever thread allocates (a study's checking
threads among them): on wgpu-native's OpenGL backend a device released on one thread while another
renders aborts the process (graphics/wgpu_device.py, ``open_wgpu_device``, ``released_at_once``)."""

from __future__ import annotations

import gc
import traceback
import weakref
from typing import Any, Iterator, List

import pytest

from apple_roofline.dispatch.peers.common import gc_paused
from apple_roofline.graphics import runner as R
from apple_roofline.graphics.options import GraphicsOptions
from apple_roofline.graphics.wgpu_device import released_at_once
from test_graphics import FakeDevice  # tests/unit, on the path as every test's folder is


class _Resource:
    """Stands for a GPU object: something a weak reference can watch."""


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The cycle collector off: what is freed is freed by reference counting alone."""
    with gc_paused():
        yield


def _raise_as_wgpu_does(resource: _Resource) -> None:
    """wgpu 0.32's ``proxy_func``: the error is a local of the frame its traceback holds."""
    error = ValueError("Color state [0] is invalid: format Rgba32Float is not renderable")
    held = resource  # noqa: F841 - a GPU object the failed call's frame holds
    raise error


def _watched_failure(call: Any) -> "weakref.ref[_Resource]":
    resource = _Resource()
    ref = weakref.ref(resource)
    with pytest.raises(ValueError, match="not renderable"):
        call(resource)
    del resource
    return ref


def test_an_error_raised_as_wgpu_raises_it_holds_its_frames(no_collector: None) -> None:
    """The control: without the decorator the resource outlives the call, in a cycle."""
    ref = _watched_failure(_raise_as_wgpu_does)
    assert ref() is not None
    gc.collect()
    assert ref() is None


def test_released_at_once_frees_the_failed_calls_objects(no_collector: None) -> None:
    ref = _watched_failure(released_at_once(_raise_as_wgpu_does))
    assert ref() is None


def test_released_at_once_keeps_the_error_and_the_result() -> None:
    wrapped = released_at_once(lambda x: x * 2)
    assert wrapped(21) == 42 and wrapped.__name__ == "<lambda>"
    with pytest.raises(ValueError, match="Rgba32Float is not renderable") as info:
        released_at_once(_raise_as_wgpu_does)(_Resource())
    # the traceback starts at the wrapped call's caller: none of the failed call's frames
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames == ["test_released_at_once_keeps_the_error_and_the_result"], frames


def test_a_study_leaves_its_device_to_no_cycle(monkeypatch: pytest.MonkeyPatch, no_collector: None) -> None:
    """Once run_graphics returns and the caller lets go, the device is freed without the collector:
    nothing the study made (checks' futures and their callbacks, the measurer) refers back to it in
    a cycle."""
    refs: List["weakref.ref[Any]"] = []

    def open_fake(api: str, index: int) -> Any:
        device = FakeDevice()
        refs.append(weakref.ref(device))
        return device

    monkeypatch.setattr(R, "open_graphics_device", open_fake)
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0", suites=["fillrate"], width=32, height=16, overdraw=4, quick=True, reps=2, telemetry=False
        )
    )
    assert study.measurements and study.valid
    (ref,) = refs
    del study
    assert ref() is None
