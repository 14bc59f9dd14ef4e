"""Test-only: the ``apple-roofline`` command line with a pass made to hang (tests/device/test_device_stop.py).

``python driver.py cuda|wgpu late|early ARGS...`` puts a test kernel in place of a product one, then runs
``apple-roofline ARGS...`` through the real entry point (:func:`apple_roofline.cli.app.main`), so the
runner, the journal, the partial results file, the exit code and the process's exit are the
product's own:

* ``cuda``: the ``idiv`` suite is replaced by one case of ``hang.cu``, whose launches after the
  first :data:`FAST_LAUNCHES` spin for ever (the spin count comes from a buffer the host writes); run it
  as ``run --device cuda:0 --suite stream,idiv ...``: stream is measured, then the hang.
* ``wgpu``: ``WgpuDevice.fill_pass`` returns passes of ``hang.wgsl``, whose loop count comes from a
  uniform buffer: small for the probe and the first measured pass, enormous from the second measured
  pass on; run it as ``graphics --device wgpu:0 --suite fillrate --f 0 ...`` (F = 0 is measured with
  store action store, then discard: the second one hangs, its time predicted from the first).

``early`` makes the very first launch or pass hang instead: its time is not known, so its bound is the
longest (:data:`apple_roofline.timing.watchdog.CAP_S`), and a signal sent meanwhile must end the process.
``hang: started`` is printed on stderr when the test kernel is first timed (CUDA) or the hanging pass
is submitted (wgpu).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np

HERE = Path(__file__).resolve().parent
#: Launches of the CUDA kernel that end: the warm-up's first call (measure.time_kernel) makes 3; the
#: next launch, in the warm-up or in the samples, hangs, its time predicted from those three.
FAST_LAUNCHES = 3
#: Clock cycles a launch that ends spins (about 60 us: a sample of 1 ms is then a batch of a few
#: dozen launches, so the launches queued behind the hung one stay far below the driver's launch
#: queue, which would block cuLaunchKernel itself); one that hangs spins 2^62 (years).
FAST_SPINS, HANG_SPINS = 100_000, 1 << 62
#: The bound of both nested loops of a wgpu pass that ends, and of one that hangs (2^64 iterations per
#: pixel; 2^32 on llvmpipe, which ends a loop after 65535).
FAST_LOOPS, HANG_LOOPS = 4, 0xFFFFFFFF


def started() -> None:
    sys.stderr.write("hang: started\n")
    sys.stderr.flush()


class Announced:
    """A kernel that says ``hang: started`` when it is first timed (its launches from then on hang,
    at once or after the first :data:`FAST_LAUNCHES`); everything else is the kernel's."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.told = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)

    def time(self, *args: Any, **kw: Any) -> Any:
        if not self.told:
            self.told = True
            started()
        return self.kernel.time(*args, **kw)


def inject_cuda(early: bool) -> None:
    import dataclasses

    from apple_roofline.suites import registry
    from apple_roofline.suites.base import Case, KernelDef, Suite

    kdef = KernelDef("idiv", "hang", "fp32", {"cuda": ("hang.cu", "hang_spin")})
    source = (HERE / "hang.cu").read_text()

    class HangSuite(Suite):
        name = "idiv"

        def total(self) -> int:
            return 1

        def cases(self) -> Iterator[Case]:
            backend = self.ctx.backend
            ctl = backend.alloc(64)
            fast = 0 if early else FAST_LAUNCHES
            ctl.write(np.array([0, fast, FAST_SPINS, HANG_SPINS, 0, 0, 0, 0], dtype=np.uint64))

            def make() -> Any:
                return Announced(backend.compile(source, "hang_spin", {}))

            yield Case(
                kernel=kdef,
                params={"n": 1},
                work_items=1,
                flops=1,
                bytes=8,
                args=[ctl],
                make_kernel=make,
                check=lambda: (True, "test kernel"),
                reset=lambda: None,
            )

    found = registry.spec

    def spec(name: str) -> registry.SuiteSpec:  # the idiv suite measures the hanging kernel instead
        return dataclasses.replace(found(name), measure=HangSuite) if name == "idiv" else found(name)

    registry.spec = spec  # type: ignore[assignment]  # the runner asks registry.spec for each suite


def inject_wgpu(early: bool) -> None:
    from apple_roofline.graphics import wgpu_device as W

    state = {"measured": 0}

    class HangPass(W.WgpuPass):
        def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> Any:
            hang = early or (read and state["measured"] >= 1)  # a measurement (not a probe) after the first
            if read:
                state["measured"] += 1
            loops = HANG_LOOPS if hang else FAST_LOOPS
            dev = self.device
            dev.device.queue.write_buffer(dev.hang_uniform, 0, np.array([loops, 0, 0, 0], dtype=np.uint32))
            if hang:
                started()
            return super().run(batch, reps, lead, count=count, read=read)

    def fill_pass(
        self: Any, *, width: int, height: int, fmt: str, F: int, layers: int, blended: bool, store: bool
    ) -> HangPass:
        if not hasattr(self, "hang_uniform"):
            wgpu = self.wgpu
            self.hang_module = self.device.create_shader_module(code=(HERE / "hang.wgsl").read_text())
            self.hang_uniform = self.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
            )
        pipeline = self.device.create_render_pipeline(
            layout="auto",
            vertex={"module": self.hang_module, "entry_point": "vs_fullscreen"},
            primitive={"topology": "triangle-list"},
            fragment={"module": self.hang_module, "entry_point": "fs_hang", "targets": [{"format": fmt}]},
        )
        group = self.device.create_bind_group(
            layout=pipeline.get_bind_group_layout(0),
            entries=[{"binding": 0, "resource": {"buffer": self.hang_uniform, "offset": 0, "size": 16}}],
        )
        return HangPass(self, pipeline, group, self._target(width, height, fmt), fmt, width, height, layers, store)

    W.WgpuDevice.fill_pass = W.released_at_once(fill_pass)  # type: ignore[method-assign]


if __name__ == "__main__":
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    {"cuda": inject_cuda, "wgpu": inject_wgpu}[sys.argv[1]](sys.argv[2] == "early")
    from apple_roofline.cli.app import main

    sys.argv = ["apple-roofline", *sys.argv[3:]]
    main()
