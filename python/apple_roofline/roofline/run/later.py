"""Checks compared while the next case measures (docs/design/budgets.md, "Time budgets").

Where reading a kernel's output copies it to the host (a discrete GPU), the comparison with the NumPy
reference is host work that the device need not wait for. The runner reads a case's output right
after its timed samples (:class:`~apple_roofline.suites.base.OutputCheck`'s ``read``), hands the
comparison to the one worker thread here, and goes on to the next case's inputs and samples; before
the next read of any output it settles the comparison (:meth:`LaterChecks.settle`), so at most one
is ever under way and the host scratch it reads from is not written meanwhile. NumPy releases the
GIL in the large array operations the comparisons consist of.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from ...study.records import Measurement
from .cases import judge

__all__ = ["LaterChecks", "Settled"]


@dataclass(frozen=True)
class Settled:
    """A case compared later, with its verdict: its Measurement (:func:`~.cases.judge`), the key the
    journal keeps it under and its progress label."""

    measurement: Measurement
    key: str
    label: str


@dataclass(frozen=True)
class _Pending:
    case: Any
    timed: Measurement
    key: str
    label: str
    verdict: "Future[Tuple[bool, str]]"


class LaterChecks:
    """One worker thread that compares read-back outputs, one case at a time."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="roofline-check")
        self._pending: Optional[_Pending] = None

    @property
    def pending(self) -> bool:
        """Whether a comparison is under way or waits to be settled."""
        return self._pending is not None

    def defer(self, case: Any, timed: Measurement, key: str, label: str) -> None:
        """Read ``case``'s output now (``case.check.read()``, an OutputCheck's) and compare it on the
        worker; ``timed`` is the case's Measurement before the check (:func:`~.cases.time_case`).

        Raises:
            RuntimeError: a comparison is still pending (:meth:`settle` it first: its read-back
                array may be the one this read overwrites).
        """
        if self._pending is not None:
            raise RuntimeError(f"{self._pending.label} is still being compared: settle it before reading {label}")
        got = case.check.read()
        self._pending = _Pending(case, timed, key, label, self._pool.submit(case.check.compare, got))

    def settle(self) -> Optional[Settled]:
        """The pending case with its verdict, once the worker has it (a wait of host work only, no
        device call); None where nothing is pending. What the comparison raised is raised here, as
        the check would have raised it on the measuring thread."""
        pending = self._pending
        if pending is None:
            return None
        try:
            verdict = pending.verdict.result()
        except Exception:
            self._pending = None  # raised once; an interrupt of the wait leaves it pending
            raise
        self._pending = None
        return Settled(judge(pending.case, pending.timed, verdict), pending.key, pending.label)

    def close(self) -> None:
        """Stop the worker (after a comparison under way; nothing is settled)."""
        self._pool.shutdown(wait=True)
