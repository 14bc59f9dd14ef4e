"""Reference images computed ahead and target checks run beside the measuring thread (docs/design/graphics.md,
"The graphics study", "Timing").

Building a texture reference (:func:`~.kernels.texture_sums`) takes longer than timing the pass, and
every second the host spends between two submissions is a second the GPU idles and lowers its clock.
So the runner asks for references before it needs them (:meth:`Checks.ahead`), compares each
read-back target with its reference on a worker thread (:meth:`Checks.check`), and keeps submitting
passes meanwhile. NumPy releases the GIL in the large array operations these consist of.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, Hashable, Optional, Set, Tuple

import numpy as np

__all__ = ["Checks", "WORKERS", "result_or"]

#: Worker threads (at most 8, and at most the host's cores less one, at least 1). The default texture
#: grid's references and checks were about 40 s of one core of a 2-core x86 host against about 6 s of
#: passes on an H100, and with 4 workers the study waited for its checks after its last pass; computed
#: in cache-sized chunks (:mod:`.kernels`, :mod:`.compare`) they are 11-15 s there.
WORKERS = max(1, min(8, (os.cpu_count() or 2) - 1))


class Checks:
    """A pool of workers for references (by key, computed once, dropped when told) and checks."""

    def __init__(self, workers: int = WORKERS) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphics-check")
        self._refs: Dict[Hashable, "Future[Any]"] = {}
        self._used: Set[Hashable] = set()  # references a check or the measuring thread waits for

    def __contains__(self, key: Hashable) -> bool:
        return key in self._refs

    def ahead(self, key: Hashable, build: Callable[[], Any]) -> None:
        """Start building reference ``key`` unless it is built or under way."""
        if key not in self._refs:
            self._refs[key] = self.pool.submit(build)

    def reference(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """Reference ``key``, building it now (on a worker) if nobody asked before; waits for it.
        Raises what ``build`` raised. Never call it from a job of this pool: the job could wait for
        work queued behind it (take :meth:`future` when submitting instead)."""
        self.ahead(key, build)
        self._used.add(key)
        return self._refs[key].result()

    def future(self, key: Hashable) -> Callable[[], Any]:
        """A callable that waits for reference ``key`` (asked for with :meth:`ahead`) and returns it;
        it keeps the reference alive after :meth:`drop`.

        Raises:
            KeyError: nobody asked for ``key``.
        """
        self._used.add(key)
        return self._refs[key].result

    def drop(self, key: Hashable) -> None:
        """Forget reference ``key`` (its memory is freed once no check holds it)."""
        self._refs.pop(key, None)

    def check(
        self, got: np.ndarray, want: Callable[[], Any], compare: Callable[[np.ndarray, Any], Tuple[bool, str]]
    ) -> "Future[Tuple[bool, str]]":
        """``compare(got, want())`` on a worker; a failure to build the reference is an invalid pass
        with the reason, never a crash."""

        def run() -> Tuple[bool, str]:
            try:
                ref = want()
            except Exception as exc:  # noqa: BLE001 - a reference that cannot be built fails the pass, with why
                return False, f"no reference: {type(exc).__name__}: {exc}"
            return compare(got, ref)

        return self.pool.submit(run)

    def close(self) -> None:
        """Stop the workers after the queued checks. References built only ahead (no check or the
        measuring thread waits for them) and not yet started are dropped first: after the last pass
        nothing would use them (a suite cut by its budget, an interrupted study), and building them
        would only delay the study's end."""
        for key, future in self._refs.items():
            if key not in self._used:
                future.cancel()
        self.pool.shutdown(wait=True)


def result_or(
    future: "Future[Tuple[bool, str]]", default: Optional[Tuple[bool, str]] = None
) -> Optional[Tuple[bool, str]]:
    """A check's verdict, or ``default`` when it was cancelled."""
    if future.cancelled():
        return default
    return future.result()
