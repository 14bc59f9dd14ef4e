"""The ``peak`` suite: compute ceilings from FMA chains on a small cache-resident buffer
(docs/design/measurement.md, "Counting FLOPs and bytes").

F = 512 on a 4 MiB input and a 4 MiB output (the M5 article's 4 MB buffer; 1 MiB in a ``--quick`` run
shrunk for time, :func:`peak_buffer_bytes`). FP32: the M5 article's
six variants ``vec4_cross4``, ``vec4_indep4``, ``vec4_indep8``, ``scalar_indep4``, ``scalar_indep8``,
``scalar_indep16``; FP16: its four, ``vec4_cross4``, ``scalar_indep8``, ``scalar_indep16``,
``scalar_indep32``, plus ``vec4_indep4`` and ``vec4_indep8`` as in FP32 (on an H200 the
cross-dependent half2 chains of ``vec4_cross4`` reached 73 TFLOP/s where independent half2 chains
reached 124 of the 134 theoretical, so without them the FP16 vector ceiling would measure the
kernel's dependencies, not the hardware); FP64: ``scalar_indep8``. Vector variants set the
"<dtype> vector" ceiling, scalar ones the "<dtype> scalar ILP" ceiling (FP64: "FP64"). A variant the
device cannot run (FP16 on a CPU without FP16 arithmetic, FP64 on a GPU without it) is reported as
skipped with the backend's reason.

Whole waves on GPUs: where a kernel reports ``wave_items`` (the work items the device runs at once:
on CUDA, SMs × resident blocks per SM × block size), the launch is rounded up to a whole number of
waves, at least MIN_WAVES (:mod:`..waves`). A launch that ends in a partial wave leaves SMs idle while the others
finish: on an H100, 4 MiB of FP64 chains is a quarter of a wave and reached 28.1 TFLOP/s where 4
whole waves reached 32.6. Such launches record ``waves`` in their parameters, and their buffers grow
to fit (tens of MiB: still compute-bound at F = 512). A case rebound to another block size
(:meth:`~.base.Case.for_block`, when tuning) is sized again in whole waves of that size, on the
same buffers where they hold it and with the same NumPy reference.

Enough work on a GPU that reports no wave: WebGPU says neither a GPU's wave nor its cores, so a
WebGPU GPU adapter (:func:`reports_no_wave`) launches at least :data:`UNKNOWN_WAVE_ITEMS` = 2^23 work
items (a quarter in a quick run shrunk for time), within the adapter's largest binding. The largest
GPUs hold 303,104 threads at once (a B200: 148 SMs × 2048), an H200 270,336 (132 × 2048), so 2^23 is
at least 27.7 of their waves and a partial last wave at most 1/28 of the launch's time, less on every
smaller GPU (and a launch's fixed start and drain, microseconds, a small share of its milliseconds).
On an H200 through Vulkan the FP32 vector peak reached 0.946 of the CUDA backend's on the 4 MiB
buffers (262,144 work items, about one wave) and 0.968 on 4x the work items; at 2^23 work items,
65,582 GFLOP/s against CUDA's 65,604 in the same lease (FP16 vector 129,394 against 129,355; the FP32
scalar ILP ceiling 1.00x, FP16's 0.94x). A CPU adapter (lavapipe) keeps PEAK_BUFFER_BYTES: its
threads are the host's few CPUs.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Mapping, Tuple

import numpy as np

from ..base import ITEMSIZE, BufferPair, Case, Constants, KernelDef, Suite, SuiteContext, prebuild
from ..chains import ChainKernel, chain_case, chain_reference
from ..fma import FMA_KERNELS
from ..waves import MIN_WAVES, wave_items
from ..work import shrink_level

__all__ = [
    "PeakSuite",
    "PEAK_VARIANTS",
    "PEAK_F",
    "PEAK_BUFFER_BYTES",
    "UNKNOWN_WAVE_ITEMS",
    "peak_buffer_bytes",
    "peak_items",
    "reports_no_wave",
]

PEAK_F = 512
PEAK_BUFFER_BYTES = 4 << 20
#: Fewest work items of a peak case on a GPU that reports no wave (module docstring): 2^23, at least
#: 27.7 waves of the largest GPUs (a B200 holds 148 SMs × 2048 = 303,104 threads at once).
UNKNOWN_WAVE_ITEMS = 1 << 23


def peak_buffer_bytes(ctx: Any) -> int:
    """Bytes of the input (and of the output) of a peak case in a suite context: PEAK_BUFFER_BYTES,
    a quarter of it in a quick run shrunk for time (its first step,
    :data:`~apple_roofline.suites.work.SHRINK_STEPS`: 1 MiB of FMA chains at F = PEAK_F is still
    compute-bound and cache-resident; GPUs still run whole waves, at least MIN_WAVES)."""
    return PEAK_BUFFER_BYTES // 4 if ctx.quick and shrink_level(ctx.options) >= 1 else PEAK_BUFFER_BYTES


def reports_no_wave(info: Mapping[str, Any]) -> bool:
    """Whether a device's ``info`` is a WebGPU GPU adapter's, whose kernels report no wave
    (``wave_items`` 0): an ``adapter_type`` other than ``CPU`` (DiscreteGPU, IntegratedGPU, VirtualGPU,
    Unknown). Only the WebGPU backend's info has the key: the CUDA, Metal and CPU backends are never one."""
    kind = str(info.get("adapter_type", "") or "")
    return bool(kind) and kind != "CPU"


def peak_items(ctx: Any, item_bytes: int) -> int:
    """Work items of a peak case of ``item_bytes`` input bytes per item, before any rounding to whole
    waves: :func:`peak_buffer_bytes` over ``item_bytes``; on a GPU that reports no wave
    (:func:`reports_no_wave`), at least :data:`UNKNOWN_WAVE_ITEMS` (a quarter in a quick run shrunk
    for time), but no more than the adapter's largest binding (``max_buffer_bytes``) holds."""
    items = peak_buffer_bytes(ctx) // item_bytes
    if not reports_no_wave(ctx.info):
        return items
    least = UNKNOWN_WAVE_ITEMS * peak_buffer_bytes(ctx) // PEAK_BUFFER_BYTES
    most = int(ctx.info.get("max_buffer_bytes", 0) or 0) // item_bytes
    return max(items, min(least, most) if most else least)


#: (dtype, variant) in the order they are measured.
PEAK_VARIANTS: Tuple[Tuple[str, str], ...] = (
    ("fp32", "vec4_cross4"),
    ("fp32", "vec4_indep4"),
    ("fp32", "vec4_indep8"),
    ("fp32", "scalar_indep4"),
    ("fp32", "scalar_indep8"),
    ("fp32", "scalar_indep16"),
    ("fp16", "vec4_cross4"),
    ("fp16", "vec4_indep4"),
    ("fp16", "vec4_indep8"),
    ("fp16", "scalar_indep8"),
    ("fp16", "scalar_indep16"),
    ("fp16", "scalar_indep32"),
    ("fp64", "scalar_indep8"),
)


def ceiling_class(dtype: str, variant: str) -> str:
    """The ceiling a peak variant can set: "FP32 vector", "FP32 scalar ILP", "FP16 …", "FP64"."""
    if dtype == "fp64":
        return "FP64"
    return f"{dtype.upper()} {'vector' if variant.startswith('vec4') else 'scalar ILP'}"


def kernel_def(dtype: str, variant: str) -> KernelDef:
    fk = FMA_KERNELS[variant]
    return KernelDef(
        "peak",
        variant,
        dtype,
        fk.sources(dtype),
        constants=fk.constants(),
        ceiling_class=ceiling_class(dtype, variant),
        ceiling_kind="compute",
    )


class PeakSuite(Suite):
    """Every PEAK_VARIANTS kernel at F = PEAK_F on PEAK_BUFFER_BYTES input and output buffers, or
    whole waves of work items on GPUs (module docstring)."""

    name = "peak"

    def __init__(self, ctx: SuiteContext) -> None:
        super().__init__(ctx)
        self.scratch = ctx.scratch  # every check reads its output into it (docs/design/budgets.md, "Time budgets")

    def total(self) -> int:
        return len(PEAK_VARIANTS)

    def cases(self) -> Iterator[Case]:
        pair = BufferPair(self.ctx.backend)
        kernels = [
            (kdef, src)
            for kdef in (kernel_def(d, v) for d, v in PEAK_VARIANTS)
            for src in [self.source(kdef)]
            if src is not None
        ]
        prebuild(self.ctx.backend, [(*src, {**self.constants(kdef), "F": PEAK_F}) for kdef, src in kernels])
        for kdef, src in kernels:
            yield self._case(
                kdef, src, self.constants(kdef), pair, chain_reference(FMA_KERNELS[kdef.name], PEAK_F, kdef.dtype)
            )

    def _case(
        self,
        kdef: KernelDef,
        src: Tuple[str, str],
        consts: Constants,
        pair: BufferPair,
        reference: Callable[[], np.ndarray],
    ) -> Case:
        """The case of ``kdef`` built with ``consts``, in whole waves where the kernel reports them
        (:func:`peak_items` where it reports none); rebound to another BLOCK, planned again here (its
        waves depend on the block)."""
        fk = FMA_KERNELS[kdef.name]
        item_bytes = fk.elems_per_item * ITEMSIZE[kdef.dtype]
        items = peak_items(self.ctx, item_bytes)
        extra: Dict[str, Any] = {}
        wave = wave_items(self.ctx.backend, src, {**consts, "F": PEAK_F})
        if wave:
            waves = max(MIN_WAVES, -(-items // wave))
            items = waves * wave
            extra["waves"] = waves
        case = chain_case(
            ChainKernel(kdef, fk, src, self.ctx.backend, consts),
            PEAK_F,
            items,
            pair.get(items * item_bytes),
            extra,
            reference,
            scratch=self.scratch,
        )
        case.rebind = lambda block: self._case(kdef, src, {**consts, "BLOCK": block}, pair, reference)
        return case
