"""wgpu's C types parsed ahead, on a thread (docs/design/wall-time.md, "Where the time goes").

wgpu 0.32 builds each struct it passes to wgpu-native with ``ffi.new("WGPU... *")``; cffi parses a
C type the first time it is named, re-reading a typedef per wgpu type each time, so every new name
costs about 10 ms of pure Python. :func:`warm_c_types` names them ahead so that those parses
overlap the device's opening and the first passes instead of delaying them.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

__all__ = ["C_TYPES", "warm_c_types"]

#: The C types wgpu 0.32 builds for this study's calls (``ffi.new``), each parsed by cffi the first
#: time it is named: about 10 ms apiece (every parse re-reads a typedef per wgpu type), 0.8 s in all
#: on the 2-core development host, on the measuring thread, most of it between the first passes.
#: :func:`warm_c_types` parses them ahead on a thread. A name wgpu no longer uses costs one parse.
C_TYPES: Tuple[str, ...] = (
    "void(WGPULogLevel, WGPUStringView, void *)",
    "WGPUStringView *",
    "WGPUInstanceDescriptor *",
    "WGPUAdapter[]",
    "WGPUAdapterInfo *",
    "WGPUChainedStruct *",
    "WGPUNativeLimits *",
    "WGPULimits *",
    "char []",
    "WGPUQueueDescriptor *",
    "WGPUDeviceExtras *",
    "WGPUChainedStruct * ",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "WGPUDeviceLostCallbackInfo *",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "WGPUUncapturedErrorCallbackInfo *",
    "WGPUFeatureName[]",
    "WGPUDeviceDescriptor *",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    "WGPURequestDeviceCallbackInfo *",
    "WGPUShaderSourceWGSL *",
    "WGPUShaderModuleDescriptor *",
    "WGPUVertexState *",
    "WGPUPrimitiveStateExtras *",
    "WGPUPrimitiveState *",
    "WGPUMultisampleState *",
    "WGPUBlendComponent *",
    "WGPUBlendState *",
    "WGPUColorTargetState *",
    "WGPUColorTargetState[]",
    "WGPUConstantEntry *",
    "WGPUConstantEntry[]",
    "WGPUFragmentState *",
    "WGPURenderPipelineDescriptor *",
    "WGPUExtent3D *",
    "WGPUTextureDescriptor *",
    "WGPUCommandEncoderDescriptor *",
    "WGPUCommandBufferDescriptor *",
    "WGPUQuerySetDescriptor *",
    "WGPUBufferDescriptor *",
    "WGPUTextureViewDescriptor *",
    "WGPUPassTimestampWrites *",
    "WGPUColor *",
    "WGPURenderPassColorAttachment *",
    "WGPURenderPassColorAttachment[]",
    "WGPURenderPassDescriptor *",
    "WGPUCommandBuffer[]",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "WGPUBufferMapCallbackInfo *",
    "intptr_t",
    "WGPUOrigin3D *",
    "WGPUTexelCopyTextureInfo *",
    "WGPUTexelCopyBufferLayout *",
    "WGPUTexelCopyBufferInfo *",
    "uint8_t []",
    "uintptr_t",
    "uint8_t *",
    "WGPUSamplerDescriptor *",
    "WGPUBindGroupEntry *",
    "WGPUBindGroupEntry[]",
    "WGPUBindGroupDescriptor *",
    "WGPUSamplerBindingLayout *",
    "WGPUQuerySetDescriptorExtras *",
    "WGPUPipelineStatisticName[]",
)


def warm_c_types(ffi: Any, names: Sequence[str] = C_TYPES) -> int:
    """Have cffi parse and cache the C types ``names`` (:data:`C_TYPES`; a function type is a
    callback's) of ``ffi``, wgpu-native's FFI, so that the calls naming them later find them
    parsed; the number it knows (a name it does not know is skipped). It only fills cffi's cache of
    parsed types, under cffi's own lock: what is built and measured is unchanged. Run on a thread
    (:class:`WgpuDevice` starts one): the parses are pure Python, and they overlap the device's
    opening and the first passes, where the measuring thread waits in native code without the
    interpreter lock."""
    known = 0
    for name in names:
        try:  # a function type is a callback's, parsed as ``ffi.callback`` parses it (no callback made)
            ffi.callback(name) if "(" in name else ffi.typeof(name)
        except Exception:  # noqa: BLE001 - a type this wgpu does not have (another version): skipped
            continue
        known += 1
    return known
