"""A wgpu device's queue with every wait bounded (docs/design/watchdog.md, "A watchdog on every device wait").

wgpu 0.32's ``sync_wait`` waits on a ``threading.Event`` without a timeout; here each wait is
:func:`apple_roofline.timing.watchdog.wait_event` on that event, in 50-ms slices that let signal handlers
run, within the calling thread's bound. The same wait the graphics study's
:class:`~apple_roofline.graphics.wgpu_device.WgpuDevice` makes, for the compute backend's device.
"""

from __future__ import annotations

from typing import Any, List

from ..graphics.wgpu_device import read_mapped, submit_bounded

__all__ = ["BoundedQueue"]


class BoundedQueue:
    """Submissions, read-backs and the wait for all of them on ``device`` (a ``wgpu.GPUDevice``),
    bounded. ``wgpu`` is the module (its flags). ``software``: a CPU adapter (lavapipe), whose
    submissions made while earlier work runs wait for it inside ``queue.submit``: a read-back's
    submission then runs on a helper thread, waited for within the bound
    (:func:`~apple_roofline.graphics.wgpu_device.submit_bounded`); on a GPU it is direct, so a
    host-timed wait (the dispatch study's synchronize) has no thread's start in it."""

    def __init__(self, wgpu: Any, device: Any, *, software: bool = False) -> None:
        self.wgpu = wgpu
        self.device = device
        self.software = software
        self._fence: Any = None

    def submit(self, commands: List[Any]) -> None:
        """``queue.submit(commands)``, direct: the dispatch study and host-timed samples time it (Vulkan,
        Metal and D3D12 return at once; the read-back after it is what waits, bounded)."""
        self.device.queue.submit(commands)

    def read_back(self, buffer: Any, offset: int = 0, size: int = -1) -> memoryview:
        """``size`` bytes of ``buffer`` (a COPY_SRC buffer) from byte ``offset`` (multiples of 4; -1:
        to the end), once every earlier submission has finished: copied into a mappable buffer in a
        new submission and mapped within the bound.

        Raises:
            DeviceStopped: the map did not complete within the calling thread's bound.
        """
        if size < 0:
            size = int(buffer.size) - offset
        staging = self.device.create_buffer(
            size=max(size, 4), usage=self.wgpu.BufferUsage.COPY_DST | self.wgpu.BufferUsage.MAP_READ
        )
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, size)
        if self.software:  # lavapipe: waits for a running kernel inside queue.submit (class docstring)
            submit_bounded(self.device.queue, [encoder.finish()])
        else:
            self.device.queue.submit([encoder.finish()])
        return self.read_mapped(staging)[:size]

    def read_mapped(self, staging: Any) -> memoryview:
        """The bytes of ``staging`` (a MAP_READ buffer), mapped once every earlier submission has
        finished, the wait bounded (:func:`~apple_roofline.graphics.wgpu_device.read_mapped`); the
        buffer is destroyed after.

        Raises:
            DeviceStopped: the map did not complete within the calling thread's bound.
        """
        return read_mapped(self.wgpu, staging)

    def wait(self) -> None:
        """Wait for everything submitted: a 4-byte read-back, which the queue orders after all
        earlier work, within the bound.

        Raises:
            DeviceStopped: the device did not finish within the calling thread's bound.
        """
        if self._fence is None:
            self._fence = self.device.create_buffer(size=4, usage=self.wgpu.BufferUsage.COPY_SRC)
        self.read_back(self._fence)
