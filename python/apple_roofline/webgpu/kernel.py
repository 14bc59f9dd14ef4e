"""A compiled WGSL compute pipeline with ``_core.Kernel``'s calls (docs/design/backends.md, "The WebGPU backend").

Timing (:meth:`WgpuKernel.time`): each sample is one compute pass of ``batch`` dispatches (wgpu puts a
barrier between dispatches that write a storage buffer, so they run one after another, as launches on
one CUDA stream do); all samples are encoded in one command encoder and submitted at once. Where the
adapter has ``timestamp-query`` the GPU writes a timestamp at each pass's beginning and end (WebGPU's
``timestampWrites``) and the sample is their difference, in the queue's timestamp period; without
it, each sample is its own submission timed by the host's ``perf_counter`` around the submit and the
bounded wait for it, and :attr:`WgpuKernel.timer` says so with that clock's resolution. The timed
samples follow an untimed lead of about a quarter of a second of the same launches in the same
submission (:meth:`WgpuKernel._lead`), so they run at the loaded clock. Every wait is bounded by the
watchdog (:mod:`.queue`).

A launch of ``n`` work items dispatches ``ceil(n / BLOCK)`` workgroups of ``BLOCK`` invocations, as
``(x, y, 1)`` with ``x`` at most the adapter's ``max-compute-workgroups-per-dimension``; a kernel's
work-item index is ``(workgroup_id.y * num_workgroups.x + workgroup_id.x) * BLOCK +
local_invocation_index`` and it returns for an index of ``n`` or more (the CUDA twins' guard).
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..graphics.pacing import SPIN_UP_S
from .layout import Binding

__all__ = ["WgpuKernel", "CLOCK_NOT_ASKED", "MAX_LEAD_LAUNCHES", "QUERY_SET_SAMPLES"]

#: The most untimed launches a spin-up lead encodes (:meth:`WgpuKernel._lead`): each is a Python call.
MAX_LEAD_LAUNCHES = 20000

#: The most samples one timestamp query set holds: WebGPU caps a query set at 4096 queries
#: (``maxQuerySetSize`` is not a limit an adapter can raise), two a sample; more samples take several
#: query sets, all written in the same submission.
QUERY_SET_SAMPLES = 2048

#: Kernel.clock's method after a time() call made with clock False (core/backend.h's kClockNotAsked).
CLOCK_NOT_ASKED = "not measured: the samples were timed without their clock (warm-up, calibration or spin-up)"


class WgpuKernel:
    """One entry point of a WGSL module, built as a compute pipeline of ``backend`` with an explicit
    bind-group layout from its declarations (``layout``: argument ``i`` is ``@binding(i)``, the
    work-item count the binding after the last argument), workgroups of ``block`` invocations."""

    def __init__(
        self, backend: Any, entry: str, pipeline: Any, group_layout: Any, layout: Tuple[Binding, ...], block: int
    ) -> None:
        self.backend = backend
        self._entry = entry
        self.pipeline = pipeline
        self.group_layout = group_layout
        self.layout = layout
        self._block = block
        self._timer = ""
        self._clock: Dict[str, Any] = {"mhz": [], "method": "not measured: no samples timed yet"}
        self._bound: Optional[Tuple[Tuple[Any, ...], Any]] = None  # the last arguments' bind group
        self._per_launch_s = 0.0  # the last call's shortest sample over its batch

    @property
    def entry(self) -> str:
        return self._entry

    @property
    def wave_items(self) -> int:
        """0: WebGPU does not say how many invocations the device runs at once."""
        return 0

    @property
    def block(self) -> int:
        """Invocations per workgroup (the override constant BLOCK)."""
        return self._block

    @property
    def simd_width(self) -> int:
        """The adapter's subgroup size where it has one size, else 0."""
        return int(self.backend.subgroup_size)

    @property
    def max_block(self) -> int:
        """The adapter's ``max-compute-invocations-per-workgroup``."""
        return int(self.backend.limits["max-compute-invocations-per-workgroup"])

    @property
    def timer(self) -> str:
        """How the last :meth:`time` call measured."""
        return self._timer

    @property
    def clock(self) -> Dict[str, Any]:
        """The clock after the last timed samples (:class:`~.clock.ClockReader`), or why not."""
        return dict(self._clock)

    # ---- arguments -----------------------------------------------------------------------------

    def _group(self, args: Sequence[Any], work_items: int) -> Any:
        """The bind group of ``args`` and the work-item count, built once for the same arguments."""
        from .buffer import WgpuBuffer

        if not 1 <= int(work_items) < 1 << 32:
            raise ValueError(f"work_items must be 1 to 2^32 - 1, not {work_items}")
        if len(args) != len(self.layout) - 1:
            raise ValueError(
                f"{self._entry} takes {len(self.layout) - 1} arguments (its bindings but the last, the "
                f"work-item count), not {len(args)}"
            )
        key = tuple(id(a) if isinstance(a, WgpuBuffer) else (type(a).__name__, a) for a in args) + (int(work_items),)
        if self._bound is not None and self._bound[0] == key:
            return self._bound[1]
        entries = []
        for b, a in zip(self.layout, [*args, int(work_items)]):
            entries.append({"binding": b.index, "resource": self._resource(b, a)})
        group = self.backend.device.create_bind_group(layout=self.group_layout, entries=entries)
        self._bound = (key, group)
        return group

    def _resource(self, b: Binding, a: Any) -> Dict[str, Any]:
        from .buffer import WgpuBuffer

        if b.space == "storage":
            if not isinstance(a, WgpuBuffer) or a.backend is not self.backend:
                raise ValueError(f"argument {b.index} of {self._entry} ({b.name}) is a buffer of this device")
            return {"buffer": a.buffer, "offset": 0, "size": int(a.buffer.size)}
        if isinstance(a, WgpuBuffer) or isinstance(a, bool):
            raise ValueError(f"argument {b.index} of {self._entry} ({b.name}: {b.type}) is a number, not {a!r}")
        return {"buffer": self.backend.uniform(b.type, a, f"argument {b.index} of {self._entry} ({b.name})")}

    def _shape(self, work_items: int) -> Tuple[int, int]:
        groups = -(-int(work_items) // self._block)
        most = int(self.backend.limits["max-compute-workgroups-per-dimension"])
        y = -(-groups // most)  # rows of at most `most` workgroups, as even as they can be: at most
        x = -(-groups // y)  # y - 1 workgroups past the last item, returning at once
        if y > most:
            raise ValueError(f"launch of {work_items} work items needs more than {most}^2 workgroups of {self._block}")
        return x, y

    def _pass(
        self, encoder: Any, group: Any, shape: Tuple[int, int], count: int, writes: Optional[Dict[str, Any]]
    ) -> None:
        p = encoder.begin_compute_pass(**({"timestamp_writes": writes} if writes else {}))
        p.set_pipeline(self.pipeline)
        p.set_bind_group(0, group)
        for _ in range(count):
            p.dispatch_workgroups(shape[0], shape[1], 1)
        p.end()

    # ---- the calls -----------------------------------------------------------------------------

    def time(
        self, args: Sequence[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True
    ) -> List[float]:
        """``reps`` samples of ``batch`` back-to-back launches of ``work_items`` work items; seconds per
        sample (module docstring). ``clock`` False: no clock is read (:attr:`clock` says so).

        Raises:
            ValueError: bad arguments; DeviceStopped: the samples outlasted the watchdog's bound.
        """
        if batch < 1 or reps < 1:
            raise ValueError(f"batch and reps are at least 1, not {batch} and {reps}")
        group = self._group(args, work_items)
        shape = self._shape(work_items)
        be = self.backend
        lead = self._lead(clock)
        if be.timestamps:
            samples = self._timestamped(group, shape, batch, reps, lead)
            self._timer = be.timestamp_note
        else:
            samples = []
            if lead:
                enc = be.device.create_command_encoder()
                self._pass(enc, group, shape, lead, None)
                be.queue.submit([enc.finish()])
            for _ in range(reps):
                enc = be.device.create_command_encoder()
                self._pass(enc, group, shape, batch, None)
                command = enc.finish()
                t0 = time.perf_counter()
                be.queue.submit([command])
                be.queue.wait()
                samples.append(time.perf_counter() - t0)
            self._timer = be.host_timer_note
        self._clock = be.clock.reading() if clock else {"mhz": [], "method": CLOCK_NOT_ASKED}
        self._per_launch_s = min(samples) / batch
        return samples

    def _timestamped(self, group: Any, shape: Tuple[int, int], batch: int, reps: int, lead: int) -> List[float]:
        """``reps`` samples of ``batch`` dispatches on the GPU's timestamps (seconds each), after ``lead``
        untimed launches, in one encoder and one submission: a query set of two timestamps a sample
        for every :data:`QUERY_SET_SAMPLES` samples, each resolved into its own buffer."""
        be, wgpu = self.backend, self.backend.wgpu
        enc = be.device.create_command_encoder()
        if lead:
            self._pass(enc, group, shape, lead, None)
        resolved = []
        for start in range(0, reps, QUERY_SET_SAMPLES):
            n = min(QUERY_SET_SAMPLES, reps - start)
            query = be.device.create_query_set(type="timestamp", count=2 * n)
            resolve = be.device.create_buffer(
                size=16 * n, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
            )
            for r in range(n):
                writes = {
                    "query_set": query,
                    "beginning_of_pass_write_index": 2 * r,
                    "end_of_pass_write_index": 2 * r + 1,
                }
                self._pass(enc, group, shape, batch, writes)
            enc.resolve_query_set(query, 0, 2 * n, resolve, 0)
            resolved.append(resolve)
        be.queue.submit([enc.finish()])
        samples: List[float] = []
        for resolve in resolved:
            ticks = np.frombuffer(be.queue.read_back(resolve), dtype=np.uint64).astype(np.int64)
            samples += [max(int(ticks[2 * r + 1] - ticks[2 * r]), 1) * be.tick_s for r in range(len(ticks) // 2)]
        return samples

    def _lead(self, clock: bool) -> int:
        """Untimed launches before the timed samples (``clock`` True), lasting about
        :data:`~apple_roofline.graphics.pacing.SPIN_UP_S` at the per-launch time of this kernel's
        last call: a GPU left idle between the host's calls lowers its clock within milliseconds
        (the H200's SM clock fell to 720 MHz between the warm-up's one-launch calls through Vulkan),
        so the samples start at the loaded clock, as the graphics study's passes do. None before the
        kernel's first call (its time is not known) nor for the warm-up's and calibration's calls."""
        if not clock or self._per_launch_s <= 0:
            return 0
        return int(min(MAX_LEAD_LAUNCHES, -(-SPIN_UP_S // self._per_launch_s)))

    def encode(self, args: Sequence[Any], work_items: int = 1) -> Any:
        """The command buffer of one launch of ``work_items`` work items, not submitted: a command
        encoder, one compute pass with one dispatch, finished (the steps the dispatch study times
        apart from the submit). Raises ValueError for bad arguments."""
        group = self._group(args, work_items)
        enc = self.backend.device.create_command_encoder()
        self._pass(enc, group, self._shape(work_items), 1, None)
        return enc.finish()

    def launch(self, args: Sequence[Any], work_items: int = 1) -> None:
        """Submit one launch of ``work_items`` work items (:meth:`encode`, then the queue's submit) and
        return without waiting; ``WgpuBackend.synchronize`` waits for it. Raises ValueError for bad
        arguments."""
        self.backend.queue.submit([self.encode(args, work_items)])

    def launch_enqueues(self) -> bool:
        """True: a launch only submits."""
        return True

    def timeline(self, args: Sequence[Any], work_items: int = 1, reps: int = 1) -> Dict[str, Any]:
        """Raises UnsupportedError: WebGPU gives no instant of the device's start on the host's clock
        (its timestamps are on the GPU's own clock, with no mapping to the host's), so a dispatch's
        start latency is not known; the dispatch study times the host's steps from Python instead."""
        from .._native import _core

        raise _core.UnsupportedError(
            "[wgpu::timeline] WebGPU gives no instant of the device's start on the host's clock: its timestamps "
            "are on the GPU's own clock, with no mapping to the host's"
        )
