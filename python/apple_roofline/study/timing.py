"""Where a study's time went: one record per suite, its seconds against its budget
(docs/design.md, "Time budgets").

A runner measures each suite against a time budget (seconds of wall time; 0 for none) and records a
:class:`SuiteTime` per suite: the seconds it took, the budget, how many cases it planned and measured,
whether the budget ran out before its last case (``cut``) and the case it stopped before. Reports
print them as the "Time per suite" table (:func:`time_rows`); a cut suite makes the whole study
partial (:attr:`~.document.Document.status`), so a suite cut short by its budget is said wherever
the study is shown, never silent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .reader import Reader

__all__ = ["SuiteTime", "SuiteClock", "time_rows", "read_suite_times", "cut_warning", "cut_note", "CUT_STATUS",
           "TIME_HEADER", "TIME_ALIGN"]

#: Columns of :func:`time_rows`.
TIME_HEADER: Tuple[str, ...] = ("suite", "measured", "seconds", "budget (s)", "status")
TIME_ALIGN = "lrrrl"
#: The "status" of a suite cut by its budget, in the table and the progress line.
CUT_STATUS = "cut short by its budget"


@dataclass(frozen=True)
class SuiteTime:
    """The wall time of one suite of a study.

    Attributes:
        suite: the suite's name.
        seconds: wall time from its first case to the end of its last, in seconds (setup, compiles,
            timing and validation; not a tuning pass before it).
        budget_s: its budget in seconds; 0 when it had none.
        measured: cases measured (valid or not; skipped kernels not counted).
        cut: True when the budget ran out with cases left, which were not measured.
        planned: the cases the suite planned (for a suite that adapts its cases to what it measured,
            as the GEMM ladder does, the most it could have measured); 0 where not recorded (files
            written before it was).
        stopped_before: in a cut suite, the first case not measured (it and every case after it
            were not); "" otherwise.
    """

    suite: str
    seconds: float
    budget_s: float = 0.0
    measured: int = 0
    cut: bool = False
    planned: int = 0
    stopped_before: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys suite, seconds, budget_s, measured, cut, planned and, in a cut
        suite, stopped_before."""
        return {"suite": self.suite, "seconds": self.seconds, "budget_s": self.budget_s,
                "measured": self.measured, "cut": self.cut, "planned": self.planned,
                **({"stopped_before": self.stopped_before} if self.stopped_before else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "SuiteTime":
        """Build from :meth:`to_dict` output (``planned`` and ``stopped_before`` may be absent: files
        written before they were recorded). Raises :class:`~.files.ResultsError` naming the field."""
        r = Reader(source)
        d = r.obj(d, where or "suite_times")
        seconds, budget = r.nonneg(d, "seconds", where), r.nonneg(d, "budget_s", where)
        return cls(suite=r.string(d, "suite", where), seconds=seconds, budget_s=budget,
                   measured=r.nonneg_int(d, "measured", where), cut=r.boolean(d, "cut", where),
                   planned=r.nonneg_int(d, "planned", where) if "planned" in d else 0,
                   stopped_before=r.string(d, "stopped_before", where, default=""))


def read_suite_times(d: Mapping[str, Any], source: str) -> Tuple[SuiteTime, ...]:
    """The optional ``suite_times`` array of a results file (empty in files written before it)."""
    r = Reader(source)
    return tuple(SuiteTime.from_dict(t, source=source, where=f"suite_times[{i}]")
                 for i, t in enumerate(r.array(d, "suite_times", "", required=False)))


class SuiteClock:
    """Times one suite of ``planned`` cases against ``budget_s`` (0: none), counting its measured cases.

    :meth:`spent` says whether the budget is used up, :meth:`cut_here` also marks the suite cut
    (checked before each case, so a case is never interrupted: a suite can run over its budget by one
    case); :meth:`record` gives the :class:`SuiteTime`."""

    def __init__(self, suite: str, budget_s: float, planned: int = 0) -> None:
        self.suite = suite
        self.budget_s = float(budget_s)
        self.planned = int(planned)
        self.start = time.perf_counter()
        self.measured = 0
        self.cut = False
        self.stopped_before = ""

    def spent(self) -> bool:
        """True once the budget (if any) has passed."""
        return self.budget_s > 0 and time.perf_counter() - self.start >= self.budget_s

    def cut_here(self, case: str = "") -> bool:
        """:meth:`spent`, and when it is, the suite is marked ``cut`` before ``case`` (the case about
        to be measured, in words): a runner asks before each case and stops when True."""
        if self.spent():
            self.cut = True
            self.stopped_before = case
            return True
        return False

    def progress_note(self) -> str:
        """What the progress line says of a suite that ended before its planned cases: ``"cut short
        by its 10 s budget"``; "" for a suite that was not cut."""
        return f"cut short by its {self.budget_s:g} s budget" if self.cut else ""

    def record(self) -> SuiteTime:
        """The suite's :class:`SuiteTime` as of now."""
        return SuiteTime(self.suite, time.perf_counter() - self.start, self.budget_s, self.measured, self.cut,
                         self.planned, self.stopped_before)


def _not_measured(t: SuiteTime) -> str:
    """``"3 of 4 planned cases measured; not measured from stream/triad/fp32 n=… on"``: what a cut
    suite lacks."""
    done = f"{t.measured} of {t.planned} planned cases" if t.planned else f"{t.measured} case{'' if t.measured == 1 else 's'}"
    rest = f"not measured from {t.stopped_before} on" if t.stopped_before else "its remaining cases not measured"
    return f"{done} measured; {rest}"


def cut_note(t: SuiteTime) -> str:
    """One clause on a suite cut by its budget, for reports, figures and ``compare``: ``"stream cut
    by its 10 s budget (3 of 4 cases measured; not measured from stream/triad/fp32 n=1048576 on)"``."""
    return f"{t.suite} cut by its {t.budget_s:g} s budget ({_not_measured(t)})"


def cut_warning(t: SuiteTime) -> Optional[str]:
    """The warning a suite cut short by its budget gets (None when it was not)."""
    if not t.cut:
        return None
    return (f"suite {t.suite} was cut short by its {t.budget_s:g} s time budget: {_not_measured(t)} "
            f"(raise it with --budget {t.suite}=SECONDS)")


def time_rows(times: Sequence[SuiteTime]) -> List[Tuple[str, ...]]:
    """Rows of the "Time per suite" table (columns :data:`TIME_HEADER`), with a total row."""
    rows: List[Tuple[str, ...]] = []
    for t in times:
        status = CUT_STATUS if t.cut else "complete"
        rows.append((t.suite, str(t.measured), f"{t.seconds:.1f}", f"{t.budget_s:g}" if t.budget_s else "none", status))
    if len(times) > 1:
        rows.append(("total", str(sum(t.measured for t in times)), f"{sum(t.seconds for t in times):.1f}", "", ""))
    return rows
