"""The Core ML entry points of the native extension on this machine: off macOS every one raises
UnsupportedError with the reason (the no_coreml.cpp stub), and the public per-call function says
so before building anything; on macOS tests/device/test_coreml.py runs them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from apple_roofline._native import _core
from apple_roofline.engines import matmul_call_seconds
from apple_roofline.errors import OptionError

pytestmark = pytest.mark.skipif(sys.platform == "darwin", reason="on macOS Core ML runs: tests/device/test_coreml.py")


def test_status_says_why_there_is_no_core_ml() -> None:
    assert "need macOS" in _core.coreml_status()


@pytest.mark.parametrize(
    "call",
    [
        lambda: _core.coreml_compile("a.mlpackage", "a.mlmodelc"),
        lambda: _core.coreml_time("a.mlmodelc", "ALL", [("x", [1, 2], b"\0\0\0\0")], "y", 1),
        lambda: _core.coreml_compute_plan("a.mlmodelc", "ALL"),
    ],
)
def test_every_entry_raises_unsupported_with_the_reason(call: object) -> None:
    with pytest.raises(_core.UnsupportedError, match=r"^\[coreml::\w+\] Core ML predictions need macOS"):
        call()  # type: ignore[operator]


def test_per_call_seconds_off_macos(tmp_path: Path) -> None:
    with pytest.raises(_core.UnsupportedError, match="Core ML predictions need macOS"):
        matmul_call_seconds(1, 256, "CPU_AND_NE", cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing built when nothing can run
    with pytest.raises(OptionError, match="units 'NPU' is not a choice"):
        matmul_call_seconds(1, 256, "NPU", cache_dir=tmp_path)
