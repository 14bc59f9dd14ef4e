"""The graphics suites through wgpu (Vulkan on Linux, Metal on macOS, D3D12 on Windows): headless
render passes, GPU timestamps, fragment-shader invocation counts, read-back targets.

Only this module touches the ``wgpu`` package (the ``graphics`` extra); the runner sees
:class:`WgpuDevice` and :class:`WgpuPass`, whose ``time(args, work_items, batch, reps)`` is called as
``_core.Kernel.time`` is, as the native render pass's is (the pacer's probe,
:meth:`~.pacing.Pacer.probe`, times either; a pass measures no clock, so it takes no ``clock``).

Timing: a sample is ``batch`` render passes in one command encoder; the GPU writes a timestamp at the
beginning of the first and the end of the last (the ``timestamp-query`` feature, WebGPU's
``timestampWrites``). :meth:`WgpuPass.run` puts a counting pass, ``lead`` untimed passes, every sample of one
measurement and the stored pass read back for validation into **one queue submission**, so the GPU runs them
back to back with no host gap (docs/design/graphics.md, "The graphics study", "Timing"). wgpu-native reports timestamps
in the backend's ticks, converted with the queue's timestamp period (:func:`timestamp_tick`). Without the
feature, a sample is the host's clock around its own submission and the wait for it, and the pass's ``timer``
says so. Pipelines and render targets are built once per device and shared by the passes that use them. Shaded
pixels: where the adapter has wgpu-native's ``pipeline-statistics-query``, one pass counts
``fragment-shader-invocations`` (which may include helper invocations along the triangle's edges).
"""

from __future__ import annotations

import contextlib
import functools
import io
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from ..errors import OptionError
from ..shaders import shader_source
from ..timing.watchdog import wait_event
from .kernels import FORMATS, TEXTURE_FORMAT
from .pacing import PassRun
from .wgpu_types import warm_c_types

__all__ = [
    "WGPU_EXTRA",
    "WgpuUnavailable",
    "WgpuDevice",
    "WgpuPass",
    "adapters",
    "import_wgpu",
    "open_wgpu_device",
    "released_at_once",
    "timestamp_tick",
]

#: What to install for this backend.
WGPU_EXTRA = "pip install 'apple_roofline[graphics]' (the wgpu package)"
_FEATURES = ("timestamp-query", "pipeline-statistics-query", "float32-blendable")


class WgpuUnavailable(RuntimeError):
    """wgpu is not installed, or finds no adapter; the message says which and what to do."""


def import_wgpu() -> Any:
    """The ``wgpu`` module, or WgpuUnavailable naming the extra to install."""
    try:
        import wgpu
    except ImportError as exc:
        raise WgpuUnavailable(f"the graphics suites need wgpu: {WGPU_EXTRA} ({exc})") from None
    return wgpu


def adapters() -> List[Dict[str, Any]]:
    """Every adapter wgpu finds, in its order (``wgpu:N`` is the N-th): name, backend, type, vendor,
    driver, the graphics features this study uses, and the largest 2D texture.

    Raises:
        WgpuUnavailable: wgpu is not installed.
    """
    wgpu = import_wgpu()
    return [_describe(a) for a in wgpu.gpu.enumerate_adapters_sync()]


def _describe(a: Any) -> Dict[str, Any]:
    """One adapter's row of :func:`adapters`."""
    info = dict(a.info)
    return {
        "name": str(info.get("device", "")),
        "backend": str(info.get("backend_type", "")),
        "adapter_type": str(info.get("adapter_type", "")),
        "vendor": str(info.get("vendor", "")),
        "driver": str(info.get("description", "")),
        "features": sorted(f for f in _FEATURES if f in a.features),
        "max_texture_2d": int(a.limits.get("max-texture-dimension-2d", 0)),
    }


def timestamp_tick(device: Any) -> Tuple[float, str]:
    """Seconds per timestamp tick of ``device``'s queue and how that was learned: wgpu-native resolves
    raw ticks (not nanoseconds) unless told to normalise them, and ``wgpuQueueGetTimestampPeriod``
    (wgpu.h) gives the nanoseconds per tick (1 on NVIDIA's Vulkan driver and on llvmpipe; other
    drivers differ). Where that call cannot be reached (another wgpu build), 1 ns is assumed and the
    note says so."""
    where = "GPU timestamps at the first pass's beginning and the last pass's end"
    try:
        from wgpu.backends.wgpu_native import extras

        # ``_internal`` is wgpu-py's handle of the native queue, the argument its own wrappers pass.
        period = float(extras.lib.wgpuQueueGetTimestampPeriod(device.queue._internal))
    except (ImportError, AttributeError) as exc:
        return 1e-9, f"{where}; 1 ns per tick assumed (wgpuQueueGetTimestampPeriod unavailable: {exc})"
    if not period > 0.0:
        return 1e-9, f"{where}; 1 ns per tick assumed (wgpuQueueGetTimestampPeriod returned {period})"
    return period * 1e-9, f"{where}; {period:g} ns per tick (wgpuQueueGetTimestampPeriod)"


_F = TypeVar("_F", bound=Callable[..., Any])


def released_at_once(fn: _F) -> _F:
    """``fn``, a call into wgpu, whose exceptions leave without their traceback so that the GPU
    objects of the failed call are released at once, on the calling thread.

    wgpu 0.32 raises its errors (``GPUValidationError`` for a format an adapter cannot render, say)
    from a frame that holds the error in a local while the error's traceback holds that frame
    (``wgpu/backends/wgpu_native/_helpers.py``, ``proxy_func``): a reference cycle that keeps every
    GPU object of the failed call's frames (pipelines, samplers, buffers, the device) alive until
    Python's cycle collector runs, which it does on whichever thread allocates at the time. The
    study's worker threads allocate; wgpu-native's OpenGL backend (llvmpipe, the software adapter
    of a machine without a GPU) aborts the whole process when an object is released on a thread
    other than its context's. Dropping the traceback breaks the cycle (the error and its message
    are kept, the traceback starts again above this call)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            exc.__traceback__ = None
            raise

    return call  # type: ignore[return-value]


def _silenced(fn: Any, *args: Any) -> None:
    """Call ``fn`` with stdout captured: wgpu 0.32's ``begin_pipeline_statistics_query`` prints its
    arguments (a leftover debug print)."""
    with contextlib.redirect_stdout(io.StringIO()):
        fn(*args)


@dataclass
class WgpuPass:
    """One render pass, ready to time: a pipeline, its bind group, the target and how it is drawn.

    ``time`` runs samples; ``read`` returns the target after the last pass (every pass leaves the
    same image); ``fragment_invocations`` counts shaded fragments of one pass (None without the
    statistics feature).
    """

    device: "WgpuDevice"
    pipeline: Any
    bind_group: Optional[Any]
    target: Any
    fmt: str
    width: int
    height: int
    layers: int
    store: bool
    timer: str = ""
    view: Optional[Any] = None

    def _encode(
        self,
        encoder: Any,
        *,
        first: bool,
        last: bool,
        query: Optional[Any],
        index: int,
        statistics: Optional[Any] = None,
        keep: bool = False,
    ) -> None:
        writes: Dict[str, Any] = {}
        if query is not None and (first or last):
            writes = {"query_set": query}
            if first:
                writes["beginning_of_pass_write_index"] = index
            if last:
                writes["end_of_pass_write_index"] = index + 1
        if self.view is None:
            self.view = self.target.create_view()
        attachment = {
            "view": self.view,
            "load_op": "clear",
            "clear_value": (0.0, 0.0, 0.0, 0.0),
            "store_op": "store" if self.store or keep else "discard",
        }
        rp = encoder.begin_render_pass(
            color_attachments=[attachment], **({"timestamp_writes": writes} if writes else {})
        )
        if statistics is not None:
            _silenced(self.device.extras.begin_pipeline_statistics_query, rp, statistics, 0)
        rp.set_pipeline(self.pipeline)
        if self.bind_group is not None:
            rp.set_bind_group(0, self.bind_group)
        rp.draw(3, self.layers)
        if statistics is not None:
            self.device.extras.end_pipeline_statistics_query(rp)
        rp.end()

    def time(self, args: Sequence[Any], work_items: int, batch: int, reps: int) -> List[float]:
        """``reps`` samples of ``batch`` passes back to back; seconds per sample (GPU timestamps, or
        the host clock where the adapter has none: :attr:`timer`). ``args`` and ``work_items`` are
        ignored (``Kernel.time``'s signature)."""
        return self.run(batch, reps, 0).samples_s

    @released_at_once
    def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> PassRun:
        """One measurement in **one queue submission**: ``lead`` untimed passes, ``reps`` samples of
        ``batch`` passes (GPU timestamps at each sample's first beginning and last end), then (``read``)
        one pass with store action store and a copy of the target to a buffer. ``count`` (where the
        adapter can) counts the fragment-shader invocations of one pass: of the stored pass when there
        is one (the store action does not change what is shaded), else of a pass before the lead.
        Without timestamps, each sample is its own submission timed by the host clock (:attr:`timer`
        says which)."""
        dev = self.device
        wgpu = dev.wgpu
        head = dev.device.create_command_encoder()
        stats, qs = None, None
        if count and dev.statistics:
            qs = dev.extras.create_statistics_query_set(dev.device, count=1, statistics=["fragment-shader-invocations"])
            stats = dev.device.create_buffer(size=8, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
            if not read:  # no stored pass to count: a pass of its own
                self._encode(head, first=False, last=False, query=None, index=0, statistics=qs)
                head.resolve_query_set(qs, 0, 1, stats, 0)
        for _ in range(lead):
            self._encode(head, first=False, last=False, query=None, index=0)
        commands = [head.finish()]
        tail = dev.device.create_command_encoder()
        image_buffer, row = None, 0
        if read:
            image_buffer, row = self._encode_readback(tail, qs)
            if qs is not None:
                tail.resolve_query_set(qs, 0, 1, stats, 0)
        if not dev.timestamps:
            samples = self._host_timed(commands, tail, batch, reps)
        else:
            samples = self._gpu_timed(commands, tail, batch, reps)
        invocations = int(np.frombuffer(dev.read_back(stats), dtype=np.uint64)[0]) if stats is not None else None
        image = self._image(image_buffer, row) if image_buffer is not None else None
        return PassRun(samples, invocations, image)

    def _host_timed(self, commands: List[Any], tail: Any, batch: int, reps: int) -> List[float]:
        """:meth:`run`'s samples without timestamps: ``commands`` (the count and the lead) submitted,
        then each sample of ``batch`` passes its own submission, timed by the host clock around it
        and the wait for it, then ``tail`` (the read-back); seconds per sample."""
        dev = self.device
        self.timer = "host clock around submit and the wait for it (no timestamp-query)"
        dev.submit(commands)
        samples = []
        for _ in range(reps):
            enc = dev.device.create_command_encoder()
            for b in range(batch):
                self._encode(enc, first=False, last=False, query=None, index=0)
            command = enc.finish()
            t0 = time.perf_counter()
            dev.device.queue.submit([command])  # timed by the host: direct
            dev.wait(timed=True)
            samples.append(time.perf_counter() - t0)
        dev.submit([tail.finish()])
        return samples

    def _gpu_timed(self, commands: List[Any], tail: Any, batch: int, reps: int) -> List[float]:
        """:meth:`run`'s samples with timestamps: ``commands``, ``reps`` samples of ``batch`` passes
        (a timestamp at each sample's first beginning and last end) and ``tail`` with the timestamps'
        resolve, in one submission; seconds per sample (at least one tick)."""
        dev = self.device
        wgpu = dev.wgpu
        query = dev.device.create_query_set(type="timestamp", count=2 * reps)
        resolve = dev.device.create_buffer(
            size=16 * reps, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        for r in range(reps):
            enc = dev.device.create_command_encoder()
            for b in range(batch):
                self._encode(enc, first=b == 0, last=b == batch - 1, query=query, index=2 * r)
            commands.append(enc.finish())
        tail.resolve_query_set(query, 0, 2 * reps, resolve, 0)
        commands.append(tail.finish())
        dev.submit(commands)
        ticks = np.frombuffer(dev.read_back(resolve), dtype=np.uint64).astype(np.int64)
        self.timer = dev.timestamp_note
        return [max(int(ticks[2 * r + 1] - ticks[2 * r]), 1) * dev.tick_s for r in range(reps)]

    def _encode_readback(self, enc: Any, statistics: Optional[Any] = None) -> Tuple[Any, int]:
        """Encode one storing pass (counting its fragment-shader invocations into ``statistics``, a
        pipeline-statistics query set, when given) and a copy of the target into a new mappable
        buffer, read by :meth:`WgpuDevice.read_mapped` with no further copy; (buffer, bytes per row).
        Rows of a texture-to-buffer copy are 256-byte aligned (WebGPU's bytesPerRow rule)."""
        wgpu = self.device.wgpu
        row = -(-self.width * FORMATS[self.fmt].bytes_per_pixel // 256) * 256
        buffer = self.device.device.create_buffer(
            size=row * self.height, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.MAP_READ
        )
        self._encode(enc, first=False, last=False, query=None, index=0, statistics=statistics, keep=True)
        enc.copy_texture_to_buffer(
            {"texture": self.target, "mip_level": 0, "origin": (0, 0, 0)},
            {"buffer": buffer, "offset": 0, "bytes_per_row": row, "rows_per_image": self.height},
            (self.width, self.height, 1),
        )
        return buffer, row

    def _image(self, buffer: Any, row: int) -> np.ndarray:
        """The (height, width, channels) image in its storage dtype from a mappable buffer of 256-byte
        rows (:meth:`_encode_readback`), once the submission that fills it has finished."""
        fmt = FORMATS[self.fmt]
        raw = np.frombuffer(self.device.read_mapped(buffer), dtype=np.uint8).reshape(self.height, row)
        image: np.ndarray = (
            np.ascontiguousarray(raw[:, : self.width * fmt.bytes_per_pixel])
            .view(fmt.dtype)
            .reshape(self.height, self.width, fmt.channels)
        )
        return image

    @released_at_once
    def read(self) -> np.ndarray:
        """The target after one pass, shape (height, width, channels), in its storage dtype. A pass
        whose store action is ``discard`` leaves no image: this one pass of the same pipeline
        stores. Read through a buffer copy, as :meth:`run` reads: wgpu 0.32's ``queue.read_texture``
        never returned on an H100 through Vulkan (driver 580.159.04; the wait stayed in
        ``_sync_wait`` for over 6 minutes), while the buffer path is what every measured pass uses."""
        enc = self.device.device.create_command_encoder()
        buffer, row = self._encode_readback(enc)
        self.device.submit([enc.finish()])
        return self._image(buffer, row)

    @released_at_once
    def fragment_invocations(self) -> Optional[int]:
        """Fragment-shader invocations of one pass (pipeline statistics), or None without the feature."""
        dev = self.device
        if not dev.statistics:
            return None
        wgpu = dev.wgpu
        qs = dev.extras.create_statistics_query_set(dev.device, count=1, statistics=["fragment-shader-invocations"])
        buf = dev.device.create_buffer(size=8, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        enc = dev.device.create_command_encoder()
        self._encode(enc, first=False, last=False, query=None, index=0, statistics=qs)
        enc.resolve_query_set(qs, 0, 1, buf, 0)
        dev.submit([enc.finish()])
        return int(np.frombuffer(dev.read_back(buf), dtype=np.uint64)[0])


def submit_bounded(queue: Any, commands: List[Any]) -> None:
    """``queue.submit(commands)`` (a ``wgpu.GPUQueue``), waited for within the calling thread's bound:
    on wgpu-native's OpenGL backend (llvmpipe) a submission that resolves queries (timestamps, pipeline
    statistics) reads them back inside the call, and on lavapipe (Vulkan on the CPU) a submission made
    while the queue still runs a pass or a kernel waits for it, so the call lasts as long as the work
    before it, in native code where no signal handler runs. It runs on a helper thread, which holds the
    only other reference to ``commands`` and drops it before it says it is done (the GPU objects stay
    released on the calling thread).

    Raises:
        DeviceStopped: the call did not return within the bound; it stays on its thread.
    """
    done = threading.Event()
    box = [commands]
    failure: List[BaseException] = []

    def call() -> None:
        try:
            queue.submit(box.pop())
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            exc.__traceback__ = None
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=call, name="wgpu-submit", daemon=True).start()
    wait_event(done, "a wgpu submission")
    if failure:
        raise failure[0]


def read_mapped(wgpu: Any, staging: Any) -> memoryview:
    """The bytes of ``staging`` (a MAP_READ buffer; ``wgpu`` the module, for its flags), mapped once
    every earlier submission has finished, the wait bounded; the buffer is destroyed after. wgpu-native
    resolves a map on its per-device polling thread, which sets the promise's threading.Event
    (``_thread_event``: what wgpu's own ``sync_wait`` blocks on, without a timeout); waiting for that
    event with a bound (:func:`apple_roofline.timing.watchdog.wait_event`), then resolving, is the same wait,
    bounded.

    Raises:
        DeviceStopped: the map did not complete within the calling thread's bound.
    """
    promise = staging.map_async(wgpu.MapMode.READ)
    event = getattr(promise, "_thread_event", None)
    if isinstance(event, threading.Event):
        wait_event(event, "a wgpu read-back")
    promise.sync_wait()
    data: memoryview = staging.read_mapped()  # a copy
    staging.unmap()
    staging.destroy()
    return data


class WgpuDevice:
    """A wgpu adapter opened as a device (``wgpu:N``), with the features the study uses enabled.
    Open it through :func:`open_wgpu_device`, which keeps one per adapter for the life of the process.

    Attributes:
        info: the adapter's description (:func:`adapters` row) and what was enabled.
        timestamps: whether render passes are timed by GPU timestamps.
        statistics: whether fragment invocations can be counted.
        tick_s: seconds per timestamp tick (:func:`timestamp_tick`).

    Raises:
        WgpuUnavailable: wgpu is not installed or finds no adapter.
        OptionError: (option ``device``) wgpu has no adapter ``index``.
    """

    @released_at_once
    def __init__(self, index: int) -> None:
        self.wgpu = import_wgpu()
        from wgpu.backends.wgpu_native import extras, ffi

        threading.Thread(target=warm_c_types, args=(ffi,), name="wgpu C types", daemon=True).start()
        self.extras = extras
        found = self.wgpu.gpu.enumerate_adapters_sync()
        if not found:
            raise WgpuUnavailable("wgpu finds no adapter on this machine (no Vulkan, Metal, D3D12 or OpenGL driver)")
        if not 0 <= index < len(found):  # the argument, not the machine (docs/design/files.md, "Exit codes")
            raise OptionError(
                "device",
                f"wgpu:{index}",
                f"wgpu:0 to wgpu:{len(found) - 1}",
                shown=f"wgpu:{index}",
                problem="is not an adapter",
                reason=f"wgpu finds {len(found)}",
            )
        self.adapter = found[index]
        features = [f for f in _FEATURES if f in self.adapter.features]
        self.device = self.adapter.request_device_sync(required_features=features)
        self.timestamps = "timestamp-query" in features
        self.statistics = "pipeline-statistics-query" in features
        self.max_texture = int(self.adapter.limits.get("max-texture-dimension-2d", 0))
        self.tick_s, self.timestamp_note = timestamp_tick(self.device)
        row = _describe(self.adapter)
        self.info: Dict[str, Any] = {
            **row,
            "backend": "wgpu",
            "wgpu_backend": row["backend"],
            "index": index,
            "wgpu_version": str(self.wgpu.__version__),
            "features_enabled": features,
        }
        self.module = self.device.create_shader_module(code=shader_source("graphics.wgsl"))
        self._textures: Dict[int, Any] = {}
        self._targets: Dict[Tuple[int, int, str], Any] = {}
        self._pipelines: Dict[Any, Any] = {}
        self._fence: Optional[Any] = None

    @property
    def name(self) -> str:
        """The adapter's device name."""
        return str(self.info["name"])

    @released_at_once
    def wait(self, *, timed: bool = False) -> None:
        """Wait for everything submitted to finish: a 4-byte read-back (:meth:`read_back`, bounded),
        which the queue orders after all earlier work (wgpu 0.32's ``on_submitted_work_done_sync``
        fails on its own callback type). ``timed``: a host-timed sample's wait (:meth:`read_back`).

        Raises:
            DeviceStopped: the device did not finish within the calling thread's bound.
        """
        if self._fence is None:
            self._fence = self.device.create_buffer(size=4, usage=self.wgpu.BufferUsage.COPY_SRC)
        self.read_back(self._fence, timed=timed)

    def submit(self, commands: List[Any]) -> None:
        """``queue.submit(commands)``, waited for within the calling thread's bound
        (:func:`submit_bounded`).

        Raises:
            DeviceStopped: the call did not return within the bound; it stays on its thread.
        """
        submit_bounded(self.device.queue, commands)

    def read_back(self, buffer: Any, *, timed: bool = False) -> memoryview:
        """The bytes of ``buffer`` (a COPY_SRC buffer) once every earlier submission has finished:
        copied into a mappable buffer in a new submission and mapped. What ``queue.read_buffer`` does,
        with the map's wait bounded (docs/design/watchdog.md, "A watchdog on every device wait"): wgpu 0.32's
        ``sync_wait`` has no timeout, and waits for ever on a device that stopped answering.

        Raises:
            DeviceStopped: the map did not complete within the calling thread's bound
                (:func:`apple_roofline.timing.watchdog.limit`); the copy stays queued on the device.
        """
        wgpu = self.wgpu
        size = int(buffer.size)
        staging = self.device.create_buffer(size=size, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.MAP_READ)
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer_to_buffer(buffer, 0, staging, 0, size)
        # bounded too (:meth:`submit`): on lavapipe (Vulkan on the CPU) a submission made while the queue
        # still runs a pass waits for that pass inside queue.submit, where no signal handler runs. A
        # host-timed wait (``timed``: no timestamp-query, whose adapters are GPUs) submits directly, so
        # the helper thread's start is not in its samples.
        if timed:
            self.device.queue.submit([encoder.finish()])
        else:
            self.submit([encoder.finish()])
        return self.read_mapped(staging)

    def read_mapped(self, staging: Any) -> memoryview:
        """The bytes of ``staging`` (a MAP_READ buffer) once every earlier submission has finished
        (:func:`read_mapped`); the buffer is destroyed after.

        Raises:
            DeviceStopped: the map did not complete within the calling thread's bound.
        """
        return read_mapped(self.wgpu, staging)

    def _target(self, width: int, height: int, fmt: str) -> Any:
        key = (width, height, fmt)
        if key not in self._targets:
            wgpu = self.wgpu
            self._targets[key] = self.device.create_texture(
                size=(width, height, 1),
                format=fmt,
                usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
            )
        return self._targets[key]

    def _pipeline(self, fragment: str, constants: Dict[str, Any], target: Dict[str, Any]) -> Any:
        """The render pipeline of ``fragment`` with ``constants`` into ``target``, built once (a new
        pipeline is a shader compile: tens of milliseconds on NVIDIA's Vulkan driver)."""
        key = (fragment, tuple(sorted(constants.items())), repr(sorted(target.items())))
        if key not in self._pipelines:
            self._pipelines[key] = self.device.create_render_pipeline(
                layout="auto",
                vertex={"module": self.module, "entry_point": "vs_fullscreen"},
                primitive={"topology": "triangle-list"},
                fragment={"module": self.module, "entry_point": fragment, "constants": constants, "targets": [target]},
            )
        return self._pipelines[key]

    @released_at_once
    def prepare_fill(self, *, fmt: str, F: int, blended: bool) -> None:
        """Build the pipeline of a fill pass ahead of it (:meth:`fill_pass` then finds it built).

        Raises:
            GPUValidationError: the adapter cannot build it (e.g. blending a format it cannot blend).
        """
        self._fill_pipeline(fmt, F, blended)

    def _fill_pipeline(self, fmt: str, F: int, blended: bool) -> Any:
        blend = {"operation": "max", "src_factor": "one", "dst_factor": "one"}
        target: Dict[str, Any] = {"format": fmt}
        if blended:
            target["blend"] = {"color": blend, "alpha": blend}
        return self._pipeline("fs_fill", {"F": F}, target)

    @released_at_once
    def fill_pass(
        self, *, width: int, height: int, fmt: str, F: int, layers: int, blended: bool, store: bool
    ) -> WgpuPass:
        """The fill shader (F chain iterations per pixel) drawn ``layers`` times into a ``fmt``
        target; ``blended`` turns on blend operation max (every layer shaded, the result exact)."""
        pipeline = self._fill_pipeline(fmt, F, blended)
        return WgpuPass(self, pipeline, None, self._target(width, height, fmt), fmt, width, height, layers, store)

    @released_at_once
    def prepare_texture(self, *, fetches: int, random: bool, bilinear: bool) -> None:
        """Build the pipeline of a texture line ahead of its passes (:meth:`texture_pass` then finds
        it built; it does not depend on the texture's size).

        Raises:
            GPUValidationError: the adapter cannot build it (e.g. it cannot render into rgba32float).
        """
        self._texture_pipeline(fetches, random, bilinear)

    def _texture_pipeline(self, fetches: int, random: bool, bilinear: bool) -> Any:
        return self._pipeline(
            "fs_texture",
            {"FETCHES": fetches, "RANDOM": bool(random), "BILINEAR": bool(bilinear)},
            {"format": TEXTURE_FORMAT},
        )

    @released_at_once
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
    ) -> WgpuPass:
        """The texture shader: ``fetches`` per pixel from ``texture`` (S x S x 4 uint8, uploaded once
        per size), coherent or random indices, nearest or bilinear filtering, into rgba32float, drawn
        ``layers`` times (identical opaque layers: the image is the same)."""
        wgpu = self.wgpu
        size = int(texture.shape[0])
        tex = self._textures.get(size)
        if tex is None:
            tex = self.device.create_texture(
                size=(size, size, 1),
                format="rgba8unorm",
                usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
            )
            self.device.queue.write_texture(
                {"texture": tex, "mip_level": 0, "origin": (0, 0, 0)},
                np.ascontiguousarray(texture),
                {"offset": 0, "bytes_per_row": size * 4},
                (size, size, 1),
            )
            self._textures = {size: tex}  # one texture alive at a time
        mode = "linear" if bilinear else "nearest"
        sampler = self.device.create_sampler(
            mag_filter=mode, min_filter=mode, address_mode_u="repeat", address_mode_v="repeat"
        )
        frame = np.array([width, height, size, 0], dtype=np.uint32)
        uniform = self.device.create_buffer_with_data(data=frame, usage=wgpu.BufferUsage.UNIFORM)
        pipeline = self._texture_pipeline(fetches, random, bilinear)
        group = self.device.create_bind_group(
            layout=pipeline.get_bind_group_layout(0),
            entries=[
                {"binding": 0, "resource": {"buffer": uniform, "offset": 0, "size": 16}},
                {"binding": 1, "resource": tex.create_view()},
                {"binding": 2, "resource": sampler},
            ],
        )
        return WgpuPass(
            self,
            pipeline,
            group,
            self._target(width, height, TEXTURE_FORMAT),
            TEXTURE_FORMAT,
            width,
            height,
            layers,
            True,
        )


_OPENED: Dict[int, WgpuDevice] = {}
_OPENING = threading.Lock()


def open_wgpu_device(index: int) -> WgpuDevice:
    """The device of adapter ``wgpu:index``, opened on the first call and kept for the life of the
    process: every later call (every later study) gets the same one, with its pipelines and
    targets already built.

    Kept rather than released because a wgpu 0.32 ``GPUDevice`` refers to itself (its ``_device``),
    so only Python's cycle collector frees it, on whichever thread allocates at the time; on
    wgpu-native's OpenGL backend (llvmpipe, the software adapter of a machine without a GPU) a
    device released on one thread while another thread has a context current panics in
    ``wgpu_hal::gles::egl::AdapterContext::lock`` (EGL ``BadAccess``) and aborts the process. Seen
    here with a study's checking threads; reproduced with one thread collecting while another
    renders.

    Raises:
        WgpuUnavailable, OptionError: as :class:`WgpuDevice`.
    """
    with _OPENING:
        if index not in _OPENED:
            _OPENED[index] = WgpuDevice(index)
        return _OPENED[index]
