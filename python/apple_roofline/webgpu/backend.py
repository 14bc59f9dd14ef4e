"""The WebGPU backend: one wgpu adapter (``wgpu:N``) with ``_core.Backend``'s calls
(docs/design/backends.md, "The WebGPU backend").

It is written in Python over wgpu-py, not in C++ over wgpu-native's C API: the suites call it exactly
as they call a native backend (``info``, ``alloc``, ``compile(source, entry, constants)``, ``gemm``,
``synchronize``; Buffer and Kernel in :mod:`.buffer` and :mod:`.kernel`), and a launch costs what
wgpu-py's calls cost a WebGPU program written in Python (the dispatch study measures it).

``compile`` builds a compute pipeline with an explicit bind-group layout read from the module's
declarations (:mod:`.layout`), the overrides the source declares set from ``constants`` (``BLOCK``:
the workgroup size, 256 unless given). Two constants are the backend's own, never passed to the
shader: ``AR_RUNTIME_CHECKS`` 1 (the default) compiles the module as every WebGPU program gets it,
with naga's bounds checks on every array access and its loop bounding; 0 compiles it trusted
(``wgpuDeviceCreateShaderModuleTrusted`` with no runtime checks), for kernels whose accesses are in
range by construction (the work-item guard) and whose loops end. A source ``"unreachable"`` (a
kernel table's :data:`~apple_roofline.suites.base.UNREACHABLE`) is a kernel WebGPU cannot express:
``compile`` raises UnsupportedError with the table's reason, so the run lists it as skipped.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
import time
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from ..graphics.wgpu_device import WgpuUnavailable, import_wgpu, timestamp_tick
from ..shaders import shader_source
from ..suites.base import UNREACHABLE
from .clock import ClockReader
from .layout import Binding, bindings, enables, overrides
from .queue import BoundedQueue

__all__ = ["WgpuBackend", "adapter_count", "NOT_REACHABLE", "COMPUTE_LIMITS", "DEFAULT_BLOCK"]
#: The threads per workgroup of a kernel whose constants give no BLOCK.
DEFAULT_BLOCK = 256
#: The adapter limits the backend asks its device for (the adapter's own maxima) and records.
COMPUTE_LIMITS = (
    "max-buffer-size",
    "max-storage-buffer-binding-size",
    "max-storage-buffers-per-shader-stage",
    "max-uniform-buffers-per-shader-stage",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-storage-size",
    "max-compute-workgroups-per-dimension",
)
#: What a run on WebGPU cannot measure, and why: the device info's ``not_reachable``.
NOT_REACHABLE: Dict[str, str] = {
    "FP64": "WGSL has no f64 type (wgpu-native's shader-f64 is a native extension, not WebGPU)",
    "tensor cores / matrix units": "WebGPU has no matrix instructions (cooperative matrices are an experimental "
    "wgpu extension, not WebGPU)",
    "vendor GEMM": "WebGPU reaches no vendor library (cuBLAS, MPS): the tiled WGSL GEMM is a comparison, not a ceiling",
    "device clock in the kernel": "WGSL has no clock a kernel can read (the clock is NVML's where it is known)",
}
_TRUST = "AR_RUNTIME_CHECKS"
_BACKEND_CONSTANTS = (_TRUST,)


def adapter_count() -> int:
    """How many adapters wgpu finds (``wgpu:0`` ... ``wgpu:N-1``); 0 without wgpu. Opens no device."""
    try:
        wgpu = import_wgpu()
    except WgpuUnavailable:
        return 0
    return len(wgpu.gpu.enumerate_adapters_sync())


def _core() -> Any:
    from .._native import _core as core

    return core


class WgpuBackend:
    """Adapter ``index`` of wgpu's list (the graphics study's ``wgpu:N``), opened with the features the
    suites use (``timestamp-query``; ``shader-f16`` where the adapter has it) and its own maxima of
    :data:`COMPUTE_LIMITS`.

    Raises:
        _core.UnsupportedError: wgpu is not installed, or the adapter is wgpu's OpenGL backend.
        _core.DeviceError: no adapter ``index``, or the device did not open.
    """

    def __init__(self, index: int = 0) -> None:
        core = _core()
        try:
            self.wgpu = wgpu = import_wgpu()
        except WgpuUnavailable as exc:
            raise core.UnsupportedError(f"[wgpu::open] {exc}") from None
        found = wgpu.gpu.enumerate_adapters_sync()
        if not 0 <= index < len(found):
            raise core.DeviceError(f"[wgpu::open] no adapter wgpu:{index}: wgpu finds {len(found)}")
        adapter = found[index]
        adapter_info = dict(adapter.info)
        api = str(adapter_info.get("backend_type", ""))
        if api.lower() in ("opengl", "gl", "gles"):
            raise core.UnsupportedError(
                f"[wgpu::open] wgpu:{index} is wgpu's OpenGL backend, a downlevel one whose objects must be "
                "released on their context's thread: the compute suites run on Vulkan, Metal and D3D12 adapters"
            )
        features = [f for f in ("timestamp-query", "shader-f16") if f in adapter.features]
        self.limits: Dict[str, int] = {k: int(adapter.limits[k]) for k in COMPUTE_LIMITS if k in adapter.limits}
        try:
            self.device = adapter.request_device_sync(required_features=features, required_limits=dict(self.limits))
        except Exception as exc:  # noqa: BLE001 - wgpu's errors, said in one line
            raise core.DeviceError(f"[wgpu::open] wgpu:{index} did not open: {exc}") from None
        # a software adapter (lavapipe) runs the work inside later submissions: those wait, bounded
        self.queue = BoundedQueue(wgpu, self.device, software=str(adapter_info.get("adapter_type", "")) == "CPU")
        self.timestamps = "timestamp-query" in features
        self.f16 = "shader-f16" in features
        self.tick_s, self.timestamp_note = timestamp_tick(self.device)
        resolution = time.get_clock_info("perf_counter").resolution
        self.host_timer_note = (
            "host clock (perf_counter, resolution {:g} s) around each sample's submit and the wait for it "
            "(the adapter has no timestamp-query)".format(resolution)
        )
        lo, hi = (
            int(adapter_info.get("stackgroup_min_size", 0) or 0),
            int(adapter_info.get("stackgroup_max_size", 0) or 0),
        )
        self.subgroup_size = lo if lo == hi else 0
        self._info = self._describe(index, adapter_info, features)
        self.clock = ClockReader(self._info)
        self._info["clock_method"] = self.clock.method
        self._kernels: Dict[Tuple[str, str, Tuple[Tuple[str, Union[int, float]], ...]], Any] = {}
        self._uniforms: Dict[Tuple[str, Union[int, float]], Any] = {}
        self._lock = threading.Lock()
        self._fill: Optional[Any] = None

    def _describe(self, index: int, a: Mapping[str, Any], features: list) -> Dict[str, Any]:  # type: ignore[type-arg]
        vendor_id = int(a.get("vendor_id", 0) or 0)
        max_bytes = min(self.limits.get("max-buffer-size", 0), self.limits.get("max-storage-buffer-binding-size", 0))
        return {
            "backend": "wgpu",
            "name": str(a.get("device", "")),
            "index": index,
            "api": str(a.get("backend_type", "")),
            "adapter_type": str(a.get("adapter_type", "")),
            "vendor": str(a.get("vendor", "")),
            "vendor_id": f"0x{vendor_id:04x}",
            "architecture": str(a.get("architecture", "")),
            "driver": str(a.get("description", "")),
            "wgpu_version": str(self.wgpu.__version__),
            "features": list(features),
            "shader_f16": self.f16,
            "timestamp_query": self.timestamps,
            "timer": self.timestamp_note if self.timestamps else self.host_timer_note,
            "limits": dict(self.limits),
            "max_buffer_bytes": max_bytes,
            "subgroup_size": self.subgroup_size,
            # a CPU adapter (lavapipe, WARP) runs its invocations on the host's threads; a GPU's cores
            # WebGPU does not say (the suites then size their launches without them)
            **({"compute_units": os.cpu_count() or 1} if str(a.get("adapter_type", "")) == "CPU" else {}),
            "not_reachable": dict(NOT_REACHABLE),
            # WGSL's fma() has the accuracy of a multiply then an add: fusing is the driver's choice
            "fma_may_round_twice": True,
        }

    def info(self) -> Dict[str, Any]:
        """The adapter: name, API (Vulkan, Metal, D3D12), driver, vendor, features, limits, the timer
        and the clock's source, and what WebGPU cannot reach (``not_reachable``)."""
        return dict(self._info)

    # ---- memory --------------------------------------------------------------------------------

    def alloc(self, nbytes: int) -> Any:
        """A zero-filled storage buffer of ``nbytes`` bytes (rounded up to 4 on the device).

        Raises:
            ValueError: ``nbytes`` below 1 or above the adapter's largest binding (``max_buffer_bytes``).
        """
        from .buffer import WgpuBuffer

        most = int(self._info["max_buffer_bytes"])
        if not 1 <= nbytes <= most:
            raise ValueError(f"a wgpu buffer is 1 to {most} bytes on this adapter (its largest binding), not {nbytes}")
        usage = self.wgpu.BufferUsage
        buffer = self.device.create_buffer(
            size=-(-nbytes // 4) * 4, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        )
        return WgpuBuffer(self, buffer, int(nbytes))

    def uniform(self, wgsl_type: str, value: Union[int, float], what: str) -> Any:
        """A uniform buffer holding ``value`` as ``wgsl_type`` (f32, i32, u32), made once per value.

        Raises:
            ValueError: an integer out of the type's range, or a value of another kind.
        """
        if wgsl_type == "f32":
            if not isinstance(value, (int, float)):
                raise ValueError(f"{what} is a float, not {value!r}")
            data = struct.pack("<f", float(value))
        elif wgsl_type in ("i32", "u32"):
            if not isinstance(value, int):
                raise ValueError(f"{what} is an integer, not {value!r}")
            lo, hi = (-(1 << 31), 1 << 31) if wgsl_type == "i32" else (0, 1 << 32)
            if not lo <= value < hi:
                raise ValueError(f"{what} is a {wgsl_type}: {lo} to {hi - 1}, not {value}")
            data = struct.pack("<i" if wgsl_type == "i32" else "<I", value)
        else:
            raise ValueError(f"{what} is a uniform of type {wgsl_type}, which no argument fills")
        key = (wgsl_type, value)
        buf = self._uniforms.get(key)
        if buf is None:
            buf = self.device.create_buffer_with_data(data=data + bytes(12), usage=self.wgpu.BufferUsage.UNIFORM)
            self._uniforms[key] = buf
        return buf

    def fill_kernel(self) -> Any:
        """The kernel of Buffer.fill32 (``shaders/wgsl/fill.wgsl``)."""
        if self._fill is None:
            self._fill = self.compile(shader_source("fill.wgsl"), "fill32", {_TRUST: 0})
        return self._fill

    # ---- kernels -------------------------------------------------------------------------------

    def compile(self, source: str, entry: str, constants: Mapping[str, Union[int, float]] = {}) -> Any:
        """Build ``entry`` of the WGSL ``source`` with ``constants`` (module docstring); cached by
        source, entry and constants.

        Raises:
            _core.CompileError: the module or the pipeline did not build (``log``: wgpu's message).
            _core.UnsupportedError: an ``unreachable`` kernel, or one that enables an extension the
                adapter lacks (``enable f16;`` without shader-f16).
            ValueError: a BLOCK outside 1 to the adapter's ``max-compute-invocations-per-workgroup``.
        """
        core = _core()
        if source == UNREACHABLE:
            raise core.UnsupportedError(f"not reachable through WebGPU: {entry}")
        key = (hashlib.sha256(source.encode()).hexdigest(), entry, tuple(sorted(constants.items())))
        with self._lock:  # the suites' prebuild compiles on threads
            kernel = self._kernels.get(key)
            if kernel is None:
                kernel = self._build(source, entry, dict(constants))
                self._kernels[key] = kernel
        return kernel

    def _build(self, source: str, entry: str, constants: Dict[str, Union[int, float]]) -> Any:
        from .kernel import WgpuKernel

        core = _core()
        if "f16" in enables(source) and not self.f16:
            raise core.UnsupportedError(f"[wgpu::compile] {entry} needs shader-f16, which {self._info['name']} lacks")
        declared = overrides(source)
        if "BLOCK" not in declared:
            raise core.CompileError(
                f"[wgpu::compile] {entry}: the source declares no `override BLOCK: u32` (the workgroup size)"
            )
        block = int(constants.get("BLOCK", DEFAULT_BLOCK))
        most = self.limits.get("max-compute-invocations-per-workgroup", 256)
        if not 1 <= block <= most:
            raise ValueError(f"BLOCK must be 1 to {most} invocations per workgroup on this adapter, not {block}")
        try:
            layout = bindings(source)
            self._check_layout(layout, entry)
        except ValueError as exc:
            raise core.CompileError(f"[wgpu::compile] {entry}: {exc}") from None
        values = {
            k: v for k, v in {**constants, "BLOCK": block}.items() if k in declared and k not in _BACKEND_CONSTANTS
        }
        try:
            module = self.device.create_shader_module(label=entry, code=source)  # validates, with naga's message
            if int(constants.get(_TRUST, 1)) == 0:
                module = self._trusted_module(source, entry)
            group_layout = self.device.create_bind_group_layout(entries=[self._layout_entry(b) for b in layout])
            pipeline = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[group_layout]),
                compute={"module": module, "entry_point": entry, "constants": values},
            )
        except Exception as exc:  # noqa: BLE001 - wgpu's validation errors carry the compiler's log
            err = core.CompileError(f"[wgpu::compile] {entry} did not build: {str(exc).strip().splitlines()[-1]}")
            err.log = str(exc)
            raise err from None
        return WgpuKernel(self, entry, pipeline, group_layout, layout, block)

    @staticmethod
    def _check_layout(layout: Tuple[Binding, ...], entry: str) -> None:
        if not layout or layout[-1].space != "uniform" or layout[-1].type != "u32":
            raise ValueError("the last binding must be the work-item count, var<uniform> n: u32")
        for b in layout:
            b.kind  # raises for a uniform of a type no argument has

    def _layout_entry(self, b: Binding) -> Dict[str, Any]:
        stage = self.wgpu.ShaderStage.COMPUTE
        kind = "uniform" if b.space == "uniform" else ("storage" if b.access == "read_write" else "read-only-storage")
        return {"binding": b.index, "visibility": stage, "buffer": {"type": kind}}

    def _trusted_module(self, source: str, entry: str) -> Any:
        """The module built with no runtime checks (wgpu-native's wgpuDeviceCreateShaderModuleTrusted)."""
        from wgpu.backends.wgpu_native import _api
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        src = ffi.new("WGPUShaderSourceWGSL *")
        code = _api.to_c_string_view(source)
        src[0].code = code
        src[0].chain.next = ffi.NULL
        src[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
        desc = ffi.new("WGPUShaderModuleDescriptor *")
        desc[0].nextInChain = ffi.cast("WGPUChainedStruct *", src)
        label = _api.to_c_string_view(entry)
        desc[0].label = label
        # _internal: wgpu-py's handle of the native device, what its own wrappers pass
        handle = lib.wgpuDeviceCreateShaderModuleTrusted(self.device._internal, desc, 0)  # WGPUShaderRuntimeChecks_None
        if handle == ffi.NULL:
            raise RuntimeError(f"the trusted module of {entry} was not created")
        return _api.GPUShaderModule(entry, handle, self.device)

    def gemm(self, dtype: str, m: int, n: int, k: int) -> Any:
        """Raises UnsupportedError: WebGPU reaches no vendor GEMM library."""
        raise _core().UnsupportedError(f"[wgpu::gemm] not reachable through WebGPU: {NOT_REACHABLE['vendor GEMM']}")

    def render_pass(self, *args: Any, **kwargs: Any) -> Any:
        """Raises UnsupportedError: the graphics study drives wgpu's render passes itself (graphics/)."""
        raise _core().UnsupportedError(
            "[wgpu::render_pass] the graphics study's wgpu passes are graphics/wgpu_device's"
        )

    def synchronize(self) -> None:
        """Wait for everything submitted, within the watchdog's bound.

        Raises:
            DeviceStopped: the device did not finish within the bound.
        """
        self.queue.wait()
