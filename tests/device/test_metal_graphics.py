"""The graphics study's render passes on the native Metal backend (metal:0): every pipeline builds,
fill and texture targets equal the NumPy references, and a quick study is valid. Runs on macOS with a
Metal device; skips elsewhere with the backend's reason."""

from __future__ import annotations

import numpy as np
import pytest

_core = pytest.importorskip("apple_roofline._native")._core
_ROW = next(b for b in _core.backends() if b["name"] == "metal")
if not _ROW["compiled"] or int(_ROW["devices"]) == 0:
    pytest.skip(f"no Metal device: {_ROW['reason']}", allow_module_level=True)

from apple_roofline.graphics import kernels as K  # noqa: E402
from apple_roofline.graphics.native_device import NativeGraphicsDevice  # noqa: E402
from apple_roofline.graphics.options import GraphicsOptions  # noqa: E402
from apple_roofline.graphics.runner import run_graphics  # noqa: E402

W, H = 64, 32


@pytest.fixture(scope="module")
def gpu() -> NativeGraphicsDevice:
    return NativeGraphicsDevice(0)


def test_device(gpu: NativeGraphicsDevice) -> None:
    assert gpu.info["backend"] == "metal" and gpu.name
    assert gpu.max_texture == 16384


@pytest.mark.parametrize("fmt", list(K.FORMATS))
@pytest.mark.parametrize("blended", [False, True])
@pytest.mark.parametrize("store", [False, True])
def test_fill_targets_equal_the_reference(gpu: NativeGraphicsDevice, fmt: str, blended: bool, store: bool) -> None:
    try:
        p = gpu.fill_pass(width=W, height=H, fmt=fmt, F=37, layers=4, blended=blended, store=store)
    except _core.UnsupportedError as exc:
        pytest.skip(f"this GPU cannot blend {fmt}: {exc}")
    ok, why = K.check_target(p.read(), K.fill_reference(W, H, 37, fmt), K.FORMATS[fmt].storage)
    assert ok, why
    samples = p.time((), 0, 2, 3)
    assert len(samples) == 3 and all(s > 0 for s in samples)
    assert "GPUEndTime" in p.timer
    n = p.fragment_invocations()
    assert n is None or n >= W * H


@pytest.mark.parametrize("pattern", K.PATTERNS)
@pytest.mark.parametrize("filter_", K.FILTERS)
def test_texture_targets_equal_the_reference(gpu: NativeGraphicsDevice, pattern: str, filter_: str) -> None:
    tex = K.texture_noise(64)
    sums = K.texture_sums(tex, W, H, pattern, filter_, (1, 5))
    for fetches in (1, 5):
        p = gpu.texture_pass(
            width=W, height=H, texture=tex, fetches=fetches, random=pattern == "random", bilinear=filter_ == "bilinear"
        )
        ok, why = K.check_target(p.read(), sums[fetches], "f32", fetches=fetches, bilinear=filter_ == "bilinear")
        assert ok, why


def test_bad_specs_are_value_errors(gpu: NativeGraphicsDevice) -> None:
    with pytest.raises(ValueError, match="valid: r8unorm, rgba8unorm, rgba16float, rgba32float"):
        gpu.backend.render_pass(
            gpu.source, "vs_fullscreen", "fs_fill", constants={"F": 1}, format="bgra8unorm", width=16, height=16
        )
    with pytest.raises(ValueError, match="power of two"):
        gpu.backend.render_pass(
            gpu.source,
            "vs_fullscreen",
            "fs_texture",
            format="rgba32float",
            width=16,
            height=16,
            texture=np.zeros(12 * 12 * 4, np.uint8),
            texture_size=12,
        )
    with pytest.raises(_core.CompileError, match="not a `fragment` function"):
        gpu.backend.render_pass(gpu.source, "vs_fullscreen", "vs_fullscreen", format="rgba8unorm", width=16, height=16)


def test_quick_study_is_valid() -> None:
    study = run_graphics(
        GraphicsOptions(device="metal:0", quick=True, width=128, height=64, overdraw=4, f_values=[0, 8], reps=3)
    )
    assert study.complete and study.device["backend"] == "metal"
    assert all(m.valid for m in study.measurements), [m.validation for m in study.measurements if not m.valid]
