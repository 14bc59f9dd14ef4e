"""A short measurement of the machine at hand, for the time prediction of a ``--quick`` run
(docs/design/budgets.md, "Time budgets"): the rates of :class:`~.predict.Rates`, taken from the sweep's own
``vec4`` FMA-chain kernel (:mod:`apple_roofline.suites.chains`) on the run's device. Nothing it
measures is reported: it only sizes the run's time budgets and grid.
"""

from __future__ import annotations

import time
from typing import Optional

from ...suites.base import KernelDef, Suite, SuiteContext
from ...suites.chains import ChainKernel, chain_case
from ...suites.fma import FMA_KERNELS
from ...timing.watchdog import watched
from .predict import Rates

__all__ = ["probe_rates", "probe_bytes", "PROBE_COMPUTE_F"]

MIB = 1 << 20
#: FMA iterations per work item of the compute probe: compute-bound on every device.
PROBE_COMPUTE_F = 256
#: Launches of each probe; the fastest counts (a launch slowed by another process on a shared
#: 2-vCPU machine is passed over).
PROBE_LAUNCHES = 5


def probe_bytes(llc_bytes: int, array_bytes: int) -> int:
    """Bytes of each of the probe's two buffers: twice the last-level cache (its launches then
    stream from memory; 64 MiB where the cache size is unknown), at least 16 MiB, at most
    ``array_bytes`` (the run's STREAM array)."""
    want = 2 * llc_bytes if llc_bytes > 0 else 64 * MIB
    return max(4096, min(max(16 * MIB, want), array_bytes))


def probe_rates(ctx: SuiteContext) -> Optional[Rates]:
    """The rates of the device of ``ctx`` (a few tenths of a second on a 2-core CPU): the ``vec4``
    chain at F = 1 over :func:`probe_bytes` per buffer (bandwidth: the fastest of
    :data:`PROBE_LAUNCHES` launches; the host's write rate: writing its input and poisoning its
    output; the host's check rate: validating its output) and at F = :data:`PROBE_COMPUTE_F` over a
    sixteenth of it (FLOP rate). None where the device cannot build or run the kernel (the run then
    keeps its default budgets and grid)."""
    from ..._native import _core

    fk = FMA_KERNELS["vec4_cross4"]
    kdef = KernelDef("probe", "vec4", "fp32", fk.sources("fp32"), constants=fk.constants())
    plain = Suite(ctx)  # the base class: a kernel's source and constants on this backend
    src = plain.source(kdef)
    if src is None:
        return None
    backend = ctx.backend
    nbytes = probe_bytes(int(ctx.info.get("llc_bytes", 0) or 0), int(ctx.array_bytes))
    items = nbytes // (fk.elems_per_item * 4)
    consts = plain.constants(kdef)
    try:
        bufs = (backend.alloc(nbytes), backend.alloc(nbytes))
        scratch = ctx.scratch
        start = time.perf_counter()
        chain = ChainKernel(kdef, fk, src, backend, consts)
        memory = chain_case(chain, 1, items, bufs, scratch=scratch)
        write_s = time.perf_counter() - start  # the input written, the output poisoned
        kernel = memory.make_kernel()
        # docs/design/watchdog.md, "A watchdog on every device wait"
        with watched("the time probe's memory kernel", None):
            launch_s = min(kernel.time(memory.args, memory.work_items, 1, PROBE_LAUNCHES, clock=False))
        start = time.perf_counter()
        memory.check()
        check_s = time.perf_counter() - start
        compute = chain_case(chain, PROBE_COMPUTE_F, max(1024, items // 16), bufs, fill_input=False)
        with watched("the time probe's compute kernel", None):
            compute_s = min(
                compute.make_kernel().time(compute.args, compute.work_items, 1, PROBE_LAUNCHES, clock=False)
            )
    except (_core.BackendError, ValueError):
        return None
    if min(write_s, launch_s, check_s, compute_s) <= 0:
        return None
    half = items * fk.elems_per_item * 4
    return Rates(
        device_gbps=memory.bytes / launch_s / 1e9,
        device_gflops=compute.flops / compute_s / 1e9,
        host_write_gbps=2 * half / write_s / 1e9,
        host_check_gbps=half / check_s / 1e9,
    )
