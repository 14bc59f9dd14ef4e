"""The graphics suites on the native Metal backend (``metal:N``): the render passes of
:mod:`.wgpu_device`, built by ``_core.Backend.render_pass`` from ``shaders/metal/graphics.metal``
(docs/design/graphics.md, "The graphics study").

The runner sees :class:`NativeGraphicsDevice` and :class:`NativePass` exactly as it sees the wgpu
ones: ``fill_pass``, ``texture_pass``, ``max_texture``, ``name``, ``info``; passes with
``time(args, work_items, batch, reps)`` (``_core.Kernel.time``'s signature), ``read``,
``fragment_invocations``, ``run`` and ``timer``. A sample is ``batch`` render passes in one command buffer,
timed by its GPUEndTime - GPUStartTime. Apple GPUs cannot count fragment-shader invocations, so
``fragment_invocations`` is None there.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ..devices import open_device, resolve_device
from ..shaders import shader_source
from .kernels import FORMATS, TEXTURE_FORMAT
from .pacing import PassRun

__all__ = ["SHADER", "NativeGraphicsDevice", "NativePass", "storage_dtype"]

#: The Metal twin of graphics.wgsl.
SHADER = "graphics.metal"


def storage_dtype(fmt: str) -> Any:
    """The NumPy dtype a ``fmt`` target stores a channel in (unorm8: uint8, f16: float16, f32:
    float32).

    Raises:
        KeyError: ``fmt`` is not one of :data:`~.kernels.FORMATS`.
    """
    return FORMATS[fmt].dtype


class NativePass:
    """One render pass of the native backend (a ``_core.RenderPass``) and its target's shape.

    Attributes:
        timer: how the last :meth:`time` call measured (empty before the first).
    """

    def __init__(self, native: Any, fmt: str, width: int, height: int) -> None:
        self.native = native
        self.fmt = fmt
        self.width = width
        self.height = height
        self.timer = ""

    def time(self, args: Sequence[Any], work_items: int, batch: int, reps: int) -> List[float]:
        """``reps`` samples of ``batch`` passes back to back; seconds per sample (device-timed).
        ``args`` and ``work_items`` are ignored (``Kernel.time``'s signature)."""
        out = [float(t) for t in self.native.time(batch, reps)]
        self.timer = str(self.native.timer)
        return out

    def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> PassRun:
        """``lead`` untimed passes (one command buffer), then ``reps`` samples of ``batch`` passes, then
        the fragment-invocation count and the target where asked. The backend encodes in native code,
        so the steps follow each other with no host gap to speak of."""
        if lead > 0:
            self.native.time(lead, 1)
        samples = self.time((), 0, batch, reps)
        return PassRun(samples, self.fragment_invocations() if count else None, self.read() if read else None)

    def read(self) -> np.ndarray:
        """The target after one pass with store action store, shape (height, width, channels), in
        the format's storage dtype (:func:`storage_dtype`).

        Raises:
            ValueError: the backend returned a different number of bytes than the target holds.
        """
        fmt = FORMATS[self.fmt]
        data = bytes(self.native.read())
        want = self.width * self.height * fmt.bytes_per_pixel
        if len(data) != want:
            raise ValueError(
                f"the {self.fmt} target read back {len(data)} bytes, not {want} "
                f"({self.width} x {self.height} x {fmt.bytes_per_pixel})"
            )
        image: np.ndarray = (
            np.frombuffer(data, dtype=storage_dtype(self.fmt)).reshape(self.height, self.width, fmt.channels).copy()
        )
        return image

    def fragment_invocations(self) -> Optional[int]:
        """Fragment-shader invocations of one pass, or None where the device cannot count them."""
        n = int(self.native.fragment_invocations())
        return None if n < 0 else n


class NativeGraphicsDevice:
    """``metal:index`` opened for the graphics study through the package's device opening
    (:func:`apple_roofline.devices.open_device`).

    Attributes:
        backend: the ``_core.Backend``.
        info: its device description, ``"backend": "metal"``.
        max_texture: the largest 2D texture side (``info["max_texture_2d"]``; 0 when unknown).
        statistics: False (no fragment-invocation counts on Apple GPUs).

    Raises:
        OptionError: (option ``device``) the Metal backend was not built (not macOS) or has no device
            ``index``.
        _core.DeviceError: there is no Metal device ``index``.
    """

    def __init__(self, index: int, backend: Any = None) -> None:
        # resolve_device checks the name against the backends compiled in before anything is opened.
        self.backend = backend if backend is not None else open_device(resolve_device(f"metal:{index}"))
        self.info: Dict[str, Any] = dict(self.backend.info())
        self.info.setdefault("index", index)
        self.max_texture = int(self.info.get("max_texture_2d", 0) or 0)
        #: Whether passes can count fragment-shader invocations: Apple GPUs cannot, so texture passes
        #: draw one layer here.
        self.statistics = False
        self.source = shader_source(SHADER)

    @property
    def name(self) -> str:
        """The device's name."""
        return str(self.info.get("name", ""))

    def fill_pass(
        self, *, width: int, height: int, fmt: str, F: int, layers: int, blended: bool, store: bool
    ) -> NativePass:
        """The fill shader (F chain iterations per pixel) drawn ``layers`` times into a ``fmt``
        target; ``blended`` turns on blend operation max (every layer shaded, the result exact).

        Raises:
            ValueError: an unknown format or a size out of range.
            _core.CompileError, _core.UnsupportedError: the device cannot build the pipeline (e.g.
                blending rgba32float).
        """
        native = self.backend.render_pass(
            self.source,
            "vs_fullscreen",
            "fs_fill",
            constants={"F": int(F)},
            format=fmt,
            width=width,
            height=height,
            instances=layers,
            blend_max=blended,
            store=store,
        )
        return NativePass(native, fmt, width, height)

    def texture_pass(
        self,
        *,
        width: int,
        height: int,
        texture: np.ndarray,
        fetches: int,
        random: bool,
        bilinear: bool,
        layers: int = 1,
    ) -> NativePass:
        """The texture shader: ``fetches`` per pixel from ``texture`` (S x S x 4 uint8, S a power of
        two), coherent or random indices, nearest or bilinear filtering, into rgba32float, drawn
        ``layers`` times (the runner draws one where the device cannot count fragment invocations).

        Raises:
            ValueError: a texture that is not S x S x 4 uint8, or a size out of range.
        """
        if (
            texture.ndim != 3
            or texture.shape[0] != texture.shape[1]
            or texture.shape[2] != 4
            or texture.dtype != np.uint8
        ):
            raise ValueError(f"texture of shape {texture.shape} and dtype {texture.dtype} is not S x S x 4 uint8")
        size = int(texture.shape[0])
        native = self.backend.render_pass(
            self.source,
            "vs_fullscreen",
            "fs_texture",
            constants={"FETCHES": int(fetches), "RANDOM": int(bool(random)), "BILINEAR": int(bool(bilinear))},
            format=TEXTURE_FORMAT,
            width=width,
            height=height,
            instances=int(layers),
            uniforms=[width, height, size, 0],
            texture=np.ascontiguousarray(texture).reshape(-1),
            texture_size=size,
            linear=bool(bilinear),
        )
        return NativePass(native, TEXTURE_FORMAT, width, height)
