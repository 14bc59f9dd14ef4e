"""The native Metal graphics device (graphics/native_device.py) against a fake ``_core.Backend``: the
spec each pass hands the backend, the read-back's shape and dtype per format, None for a device that
cannot count fragment invocations, and the runner over it. No native extension (tests/unit/conftest.py)."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

from apple_roofline.graphics import kernels as K
from apple_roofline.graphics.native_device import NativeGraphicsDevice, NativePass, storage_dtype
from apple_roofline.graphics.runner import open_graphics_device
from apple_roofline.shaders import shader_source


class FakeRenderPass:
    """A ``_core.RenderPass`` whose target is the NumPy reference of its spec."""

    def __init__(self, spec: Dict[str, Any], invocations: int) -> None:
        self.spec = spec
        self.invocations = invocations
        self.timer = ""
        self.calls: List[Any] = []

    def time(self, batch: int, reps: int) -> List[float]:
        self.calls.append((batch, reps))
        self.timer = "command buffer GPUEndTime - GPUStartTime"
        return [1e-3 * batch] * reps

    def read(self) -> bytes:
        s = self.spec
        w, h = s["width"], s["height"]
        if s["fragment"] == "fs_fill":
            image = K.fill_reference(w, h, s["constants"]["F"], s["format"])
        else:
            size = s["texture_size"]
            tex = np.frombuffer(bytes(s["texture"]), np.uint8).reshape(size, size, 4)
            c = s["constants"]
            image = K.texture_reference(
                w,
                h,
                tex,
                c["FETCHES"],
                "random" if c["RANDOM"] else "coherent",
                "bilinear" if c["BILINEAR"] else "nearest",
            )
        return image.tobytes()

    def fragment_invocations(self) -> int:
        return self.invocations


class FakeBackend:
    def __init__(self, invocations: int = -1) -> None:
        self.invocations = invocations
        self.specs: List[Dict[str, Any]] = []

    def info(self) -> Dict[str, Any]:
        return {"backend": "metal", "name": "Apple M5", "index": 0, "max_texture_2d": 16384}

    def render_pass(self, source: str, vertex: str, fragment: str, **kw: Any) -> FakeRenderPass:
        spec = {"source": source, "vertex": vertex, "fragment": fragment, **kw}
        self.specs.append(spec)
        return FakeRenderPass(spec, self.invocations)


W, H = 24, 8


def test_device_attributes() -> None:
    dev = NativeGraphicsDevice(0, FakeBackend())
    assert dev.name == "Apple M5" and dev.info["backend"] == "metal" and dev.max_texture == 16384
    assert dev.source == shader_source("graphics.metal")


@pytest.mark.parametrize("fmt", list(K.FORMATS))
def test_fill_pass_spec_and_read_back(fmt: str) -> None:
    backend = FakeBackend()
    dev = NativeGraphicsDevice(0, backend)
    p = dev.fill_pass(width=W, height=H, fmt=fmt, F=9, layers=4, blended=True, store=False)
    spec = backend.specs[-1]
    assert spec["vertex"] == "vs_fullscreen" and spec["fragment"] == "fs_fill"
    assert spec["constants"] == {"F": 9} and spec["format"] == fmt and spec["instances"] == 4
    assert spec["blend_max"] is True and spec["store"] is False
    assert (spec["width"], spec["height"]) == (W, H)
    got = p.read()
    assert got.shape == (H, W, K.FORMATS[fmt].channels) and got.dtype == storage_dtype(fmt)
    ok, why = K.check_target(got, K.fill_reference(W, H, 9, fmt), K.FORMATS[fmt].storage)
    assert ok, why
    assert p.fragment_invocations() is None
    assert p.timer == ""
    assert p.time((), 0, 3, 2) == [3e-3, 3e-3] and p.timer.startswith("command buffer")


def test_storage_dtypes() -> None:
    assert [np.dtype(storage_dtype(f)) for f in K.FORMATS] == [np.uint8, np.uint8, np.float16, np.float32]


@pytest.mark.parametrize("random", [False, True])
@pytest.mark.parametrize("bilinear", [False, True])
def test_texture_pass_spec(random: bool, bilinear: bool) -> None:
    backend = FakeBackend(invocations=W * H)
    dev = NativeGraphicsDevice(0, backend)
    tex = K.texture_noise(16)
    p = dev.texture_pass(width=W, height=H, texture=tex, fetches=3, random=random, bilinear=bilinear)
    spec = backend.specs[-1]
    assert spec["fragment"] == "fs_texture" and spec["format"] == K.TEXTURE_FORMAT
    assert spec["constants"] == {"FETCHES": 3, "RANDOM": int(random), "BILINEAR": int(bilinear)}
    assert all(type(v) is int for v in spec["constants"].values()), "the binding takes ints, not bools"
    assert spec["uniforms"] == [W, H, 16, 0] and spec["texture_size"] == 16 and spec["linear"] is bilinear
    assert bytes(spec["texture"]) == tex.tobytes()
    assert p.fragment_invocations() == W * H
    got = p.read()
    assert got.dtype == np.float32 and got.shape == (H, W, 4)


def test_bad_texture_and_short_read() -> None:
    dev = NativeGraphicsDevice(0, FakeBackend())
    with pytest.raises(ValueError, match="is not S x S x 4 uint8"):
        dev.texture_pass(
            width=W, height=H, texture=np.zeros((16, 8, 4), np.uint8), fetches=1, random=False, bilinear=False
        )

    class Short:
        def read(self) -> bytes:
            return b"\0" * 5

    with pytest.raises(ValueError, match="read back 5 bytes, not"):
        NativePass(Short(), "rgba8unorm", W, H).read()


def test_metal_opens_the_native_device(monkeypatch: pytest.MonkeyPatch) -> None:
    import apple_roofline.graphics.native_device as nd

    opened: List[str] = []

    def fake_open(spec: str) -> FakeBackend:
        opened.append(spec)
        return FakeBackend()

    monkeypatch.setattr(nd, "open_device", fake_open)
    monkeypatch.setattr(nd, "resolve_device", lambda spec: str(spec))  # checked against the registry first
    dev = open_graphics_device("metal", 2)
    assert isinstance(dev, NativeGraphicsDevice) and opened == ["metal:2"]


def test_run_graphics_on_the_native_device(monkeypatch: pytest.MonkeyPatch) -> None:
    import apple_roofline.graphics.native_device as nd
    from apple_roofline.graphics.options import GraphicsOptions
    from apple_roofline.graphics.runner import run_graphics

    monkeypatch.setattr(nd, "open_device", lambda spec: FakeBackend())
    monkeypatch.setattr(nd, "resolve_device", lambda spec: str(spec))
    study = run_graphics(
        GraphicsOptions(
            device="metal:0",
            suites=["fillrate", "texture"],
            quick=True,
            width=32,
            height=16,
            overdraw=2,
            f_values=[0, 8],
            reps=2,
        )
    )
    assert study.complete and study.measurements
    assert all(m.valid for m in study.measurements), [m.validation for m in study.measurements if not m.valid]
    assert study.device["backend"] == "metal"
