"""A sampler started on a thread, so that opening its source (NVML's initialisation, finding the
GPU) overlaps the rest of a run's start-up (docs/design/wall-time.md, "Where the time goes")."""

from __future__ import annotations

import threading
from typing import Optional

from .base import Sampler

__all__ = ["SamplerStart"]


class SamplerStart:
    """Starts ``sampler`` (:meth:`Sampler.start`) on a thread of its own when ``background``, else
    at :meth:`wait`; :meth:`wait` returns it started (opened, or failed with its reason, as
    :meth:`Sampler.start`, which never raises for its source's failure). Nothing the sampler
    records changes: only when its opening runs."""

    def __init__(self, sampler: Sampler, background: bool) -> None:
        self.sampler = sampler
        self._thread: Optional[threading.Thread] = None
        self._started = False
        if background:
            self._thread = threading.Thread(target=sampler.start, name="sampler start", daemon=True)
            self._thread.start()

    def join(self) -> None:
        """Wait for a start on the thread to end (so that the sampler is never stopped while it
        opens); starts nothing."""
        if self._thread is not None:
            self._thread.join()

    def wait(self) -> Sampler:
        """The sampler, once started (at most once)."""
        if self._thread is not None:
            self._thread.join()
        elif not self._started:
            self.sampler.start()
        self._started = True
        return self.sampler
