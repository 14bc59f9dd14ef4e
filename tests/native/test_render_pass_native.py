"""Backend.render_pass on this build's CPU backend: render passes are Metal's (and wgpu's), so the CPU
raises UnsupportedError naming the backend (core/backend.h, Backend::render_pass)."""

from __future__ import annotations

import pytest

from apple_roofline.shaders import shader_source

_core = pytest.importorskip("apple_roofline._native")._core


def test_cpu_has_no_render_passes() -> None:
    cpu = _core.Backend("cpu")
    with pytest.raises(_core.UnsupportedError, match=r"\[cpu::render_pass\] the cpu backend has no render passes"):
        cpu.render_pass(
            shader_source("graphics.metal"),
            "vs_fullscreen",
            "fs_fill",
            constants={"F": 1},
            format="rgba8unorm",
            width=16,
            height=16,
        )


def test_render_pass_arguments_are_checked_before_the_backend() -> None:
    cpu = _core.Backend("cpu")
    with pytest.raises(ValueError, match="texture must be None, bytes or a C-contiguous uint8 array"):
        cpu.render_pass("", "v", "f", format="rgba8unorm", width=16, height=16, texture=[1, 2, 3])
    with pytest.raises(ValueError, match="width = -1 is out of range"):
        cpu.render_pass("", "v", "f", format="rgba8unorm", width=-1, height=16)
