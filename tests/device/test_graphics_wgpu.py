"""The graphics suites through real wgpu: on a GPU (Vulkan on the NVIDIA machines) or a software
adapter (Mesa's lavapipe: ``apt-get install mesa-vulkan-drivers``). Skips with the reason where wgpu
is not installed or finds no adapter."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

wgpu = pytest.importorskip("wgpu", reason="wgpu is not installed: pip install 'apple_roofline[graphics]'")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

from apple_roofline.graphics import kernels as K  # noqa: E402
from apple_roofline.graphics.options import GraphicsOptions  # noqa: E402
from apple_roofline.graphics.runner import run_graphics  # noqa: E402
from apple_roofline.graphics.wgpu_device import WgpuDevice, adapters, open_wgpu_device  # noqa: E402

ADAPTERS = adapters()
if not ADAPTERS:
    pytest.skip("wgpu finds no adapter (no Vulkan, Metal or D3D12 driver)", allow_module_level=True)
W, H = 64, 32
#: The adapter these tests use (``wgpu:N``); APPLE_ROOFLINE_TEST_WGPU_ADAPTER picks another, so that a
#: two-GPU machine can run one tier per GPU beside CUDA_VISIBLE_DEVICES (docs/design/watchdog.md, "A GPU whose
#: render passes never finish").
INDEX = int(os.environ.get("APPLE_ROOFLINE_TEST_WGPU_ADAPTER", "0"))
if INDEX >= len(ADAPTERS):
    pytest.skip(
        f"APPLE_ROOFLINE_TEST_WGPU_ADAPTER={INDEX}: wgpu finds {len(ADAPTERS)} adapters", allow_module_level=True
    )


def built(make: Any, **kw: Any) -> Any:
    """``make(**kw)``, or a skip naming what the adapter lacks (OpenGL adapters, llvmpipe among them,
    cannot render into rgba32float, which the texture suite and one fill format need)."""
    try:
        return make(**kw)
    except wgpu.GPUValidationError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        if "renderable" in lines[-1] or "blend" in lines[-1].lower():
            pytest.skip(f"this adapter cannot build the pass: {lines[-1]}")
        raise


@pytest.fixture(scope="module")
def gpu() -> WgpuDevice:
    return open_wgpu_device(INDEX)


def test_the_wgsl_compiles_for_every_entry_and_constant(gpu: WgpuDevice) -> None:
    """wgpu's own shader compiler (naga) validates the WGSL and builds every pipeline the suites use;
    a format the adapter cannot render is the only failure allowed (the runner skips it, saying so)."""
    info = gpu.module.get_compilation_info_sync()
    assert not [m for m in info if getattr(m, "type", "") == "error"], info
    passes: list = []
    for fmt in K.FORMATS:
        for blended in (False, True):
            if blended and fmt == "rgba32float" and "float32-blendable" not in gpu.info["features_enabled"]:
                continue
            passes.append(
                lambda fmt=fmt, blended=blended: gpu.fill_pass(
                    width=W, height=H, fmt=fmt, F=3, layers=2, blended=blended, store=True
                )
            )
    for random in (False, True):
        for bilinear in (False, True):
            passes.append(
                lambda random=random, bilinear=bilinear: gpu.texture_pass(
                    width=W, height=H, texture=K.texture_noise(16), fetches=2, random=random, bilinear=bilinear
                )
            )
    unrenderable = []
    for make in passes:
        try:
            make()
        except wgpu.GPUValidationError as exc:
            if "not renderable" not in str(exc):
                raise
            unrenderable.append(str(exc).strip().splitlines()[-1])
    assert len(unrenderable) < len(passes), unrenderable


@pytest.mark.parametrize("fmt", list(K.FORMATS))
@pytest.mark.parametrize("blended", [False, True])
def test_fill_targets_equal_the_reference(gpu: WgpuDevice, fmt: str, blended: bool) -> None:
    if blended and fmt == "rgba32float" and "float32-blendable" not in gpu.info["features_enabled"]:
        pytest.skip("this adapter cannot blend rgba32float (no float32-blendable)")
    p = built(gpu.fill_pass, width=W, height=H, fmt=fmt, F=37, layers=4, blended=blended, store=False)
    ok, why = K.check_target(p.read(), K.fill_reference(W, H, 37, fmt), K.FORMATS[fmt].storage)
    assert ok, why
    samples = p.time((), 0, 2, 3)
    assert len(samples) == 3 and all(s > 0 for s in samples)


@pytest.mark.parametrize("pattern", K.PATTERNS)
@pytest.mark.parametrize("filter_", K.FILTERS)
def test_texture_targets_equal_the_reference(gpu: WgpuDevice, pattern: str, filter_: str) -> None:
    tex = K.texture_noise(64)
    p = built(
        gpu.texture_pass,
        width=W,
        height=H,
        texture=tex,
        fetches=5,
        random=pattern == "random",
        bilinear=filter_ == "bilinear",
    )
    ok, why = K.check_target(
        p.read(), K.texture_reference(W, H, tex, 5, pattern, filter_), "f32", fetches=5, bilinear=filter_ == "bilinear"
    )
    assert ok, why


def test_fragment_invocations_count_every_blended_layer(gpu: WgpuDevice) -> None:
    if not gpu.statistics:
        pytest.skip("no pipeline-statistics-query on this adapter")
    p = gpu.fill_pass(width=W, height=H, fmt="rgba8unorm", F=1, layers=4, blended=True, store=True)
    n = p.fragment_invocations()
    assert n is not None and n >= W * H * 4  # helper invocations along the triangle's edge may add some
    assert n < W * H * 4 * 1.5


def test_a_quick_study_is_valid(gpu: WgpuDevice) -> None:
    study = run_graphics(GraphicsOptions(device=f"wgpu:{INDEX}", width=W, height=H, overdraw=4, quick=True, reps=2))
    assert study.valid, [m.validation for m in study.measurements if not m.valid]
    timers = {str(m.params["timer"]) for m in study.measurements}
    if gpu.timestamps:
        assert all(t.startswith("GPU timestamps") for t in timers), timers
        assert all("per tick" in t for t in timers), timers  # the tick's length is stated
        assert gpu.tick_s > 0 and "wgpuQueueGetTimestampPeriod" in gpu.timestamp_note
    assert np.all([m.median_s > 0 for m in study.measurements])


def test_studies_share_one_device_and_survive_a_collector_on_another_thread(gpu: WgpuDevice) -> None:
    """The device is opened once per process, and nothing of a study waits for the cycle collector:
    a thread collecting all the while two studies run (one pass of which this adapter may be unable
    to build) frees no GPU object. Before, on llvmpipe's OpenGL backend, this aborted the process
    (a device released on the collecting thread while the main thread rendered: EGL BadAccess in
    wgpu_hal::gles::egl::AdapterContext::lock)."""
    import gc
    import threading

    assert open_wgpu_device(INDEX) is gpu
    # What the tests before this one left is collected here and the rest frozen (gc.freeze): the
    # collector then walks only what the studies make, their GPU objects among it. Unfrozen, each of
    # its collections walked the whole tier's heap holding the GIL (99 ms for 167k objects on a 2-core
    # VM), the studies ran between them: 42 s instead of 3 s there, 92 s in an H200 host's tier.
    gc.collect()
    gc.freeze()
    stop = threading.Event()
    collections = []

    def collect() -> None:
        while not stop.is_set():
            collections.append(gc.collect())
            stop.wait(0.001)

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    try:
        for _ in range(2):
            study = run_graphics(
                GraphicsOptions(
                    device=f"wgpu:{INDEX}",
                    suites=["fillrate", "texture"],
                    width=W,
                    height=H,
                    overdraw=4,
                    quick=True,
                    reps=2,
                    telemetry=False,
                )
            )
            assert study.measurements and study.valid
    finally:
        stop.set()
        collector.join()
        gc.unfreeze()
    assert len(collections) > 1  # it collected while the studies ran


def test_every_c_type_warmed_ahead_is_one_this_wgpu_knows() -> None:
    """The types parsed ahead on a thread (:func:`warm_c_types`) are wgpu's own: a renamed one would
    silently be parsed on the measuring thread again."""
    from wgpu.backends.wgpu_native import ffi

    from apple_roofline.graphics.wgpu_types import C_TYPES, warm_c_types

    assert warm_c_types(ffi) == len(C_TYPES)
    assert warm_c_types(ffi, ["WGPUNoSuchThing *"]) == 0
