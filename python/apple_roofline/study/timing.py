"""Where a study's time went: one record per suite, its seconds against its budget
(docs/design/budgets.md, "Time budgets").

A runner measures each suite against a time budget (seconds of wall time; 0 for none) and records a
:class:`SuiteTime` per suite: the seconds it took, the budget, how many cases it planned and measured,
whether the budget ran out before its last case (``cut``) and the case it stopped before. Reports
print them as the "Time per suite" table (:func:`time_rows`); a cut suite makes the whole study
partial (:attr:`~.document.Document.status`), so a suite cut short by its budget is said wherever
the study is shown, never silent.

The time outside the suites is a :class:`PhaseTime` per phase (:data:`PHASES`: ``start-up`` from the
process's start to the first suite, ``between suites``, ``end`` from the last suite to the last file
written), measured on one clock from :func:`process_start`; the table then ends with the ``wall``
total, so that it accounts for the whole run.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple, TypeVar

from .reader import Reader


class _Phased(Protocol):
    """A study document (a dataclass) with its phases outside the suites."""

    @property
    def phase_times(self) -> Tuple["PhaseTime", ...]: ...


#: A study document with ``phase_times`` (:meth:`EndClock.with_end`).
D = TypeVar("D", bound=_Phased)

__all__ = [
    "SuiteTime",
    "PhaseTime",
    "PHASES",
    "START_UP",
    "BETWEEN",
    "END",
    "process_start",
    "start_of",
    "read_phase_times",
    "OutsideClock",
    "EndClock",
    "wall_seconds",
    "SuiteClock",
    "time_rows",
    "time_line",
    "time_notes",
    "read_suite_times",
    "cut_warning",
    "cut_note",
    "CUT_STATUS",
    "TIME_HEADER",
    "TIME_ALIGN",
]

#: Columns of :func:`time_rows`.
TIME_HEADER: Tuple[str, ...] = ("suite", "measured", "seconds", "budget (s)", "status")
TIME_ALIGN = "lrrrl"
#: The phases outside the suites, in the order a run passes them (:class:`PhaseTime`).
START_UP, BETWEEN, END = "start-up", "between suites", "end"
PHASES: Tuple[str, ...] = (START_UP, BETWEEN, END)

#: ``time.perf_counter()`` when this module was imported: the package's import, the start-up's
#: origin where the OS does not tell the process's start, or its start is not this interpreter's
#: (:func:`process_start`).
IMPORTED_AT = time.perf_counter()
#: The process's CPU seconds (every thread) when this module was imported (:func:`start_of`).
IMPORTED_CPU_S = time.process_time()
#: Seconds a process may have waited (its age less its CPU time) before the package's import and
#: still be this interpreter's own: an interpreter's start-up computes, it does not wait seconds.
#: A shell that ran other commands first (``bash -c "pip install . && apple-roofline run"``
#: exec's the tool into its own process) waited for them longer.
MAX_WAIT_BEFORE_IMPORT_S = 1.0

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
        return {
            "suite": self.suite,
            "seconds": self.seconds,
            "budget_s": self.budget_s,
            "measured": self.measured,
            "cut": self.cut,
            "planned": self.planned,
            **({"stopped_before": self.stopped_before} if self.stopped_before else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "SuiteTime":
        """Build from :meth:`to_dict` output (``planned`` and ``stopped_before`` may be absent: files
        written before they were recorded). Raises :class:`~.files.ResultsError` naming the field."""
        r = Reader(source)
        d = r.obj(d, where or "suite_times")
        seconds, budget = r.nonneg(d, "seconds", where), r.nonneg(d, "budget_s", where)
        return cls(
            suite=r.string(d, "suite", where),
            seconds=seconds,
            budget_s=budget,
            measured=r.nonneg_int(d, "measured", where),
            cut=r.boolean(d, "cut", where),
            planned=r.nonneg_int(d, "planned", where) if "planned" in d else 0,
            stopped_before=r.string(d, "stopped_before", where, default=""),
        )


@dataclass(frozen=True)
class PhaseTime:
    """The wall time of one phase of a study outside its suites (:data:`PHASES`).

    Attributes:
        phase: ``"start-up"`` (from :attr:`since` to the first suite's start: imports, opening the
            device, loading its libraries, telemetry, a quick run's plan), ``"between suites"``
            (tuning, clock readings and preparing a suite, between one suite's end and the next
            one's start) or ``"end"`` (from the last suite's end to the last file written:
            assembling the results, the reports and figures).
        seconds: its wall time, in seconds (>= 0).
        parts: named steps within it, ``(name, seconds)`` in order (may be empty; steps that ran
            side by side overlap, so they need not add up to :attr:`seconds`).
        since: where a start-up begins: ``"process start"`` (told by the OS), ``"package import"``
            (:func:`process_start`) or, measured by a library call, ``"the runner's start"``; "" for
            the other phases.
        until: where a phase still under way was read: ``"this report"`` in the reports, which are
            drawn before the end phase ends; "" for a finished phase (the results file's).
    """

    phase: str
    seconds: float
    parts: Tuple[Tuple[str, float], ...] = ()
    since: str = ""
    until: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys phase, seconds and, where set, parts ({name: seconds}), since,
        until."""
        return {
            "phase": self.phase,
            "seconds": self.seconds,
            **({"parts": dict(self.parts)} if self.parts else {}),
            **({"since": self.since} if self.since else {}),
            **({"until": self.until} if self.until else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "PhaseTime":
        """Build from :meth:`to_dict` output. Raises :class:`~.files.ResultsError` naming the field
        (a phase not in :data:`PHASES`, a negative number)."""
        r = Reader(source)
        d = r.obj(d, where or "phase_times")
        phase = r.string(d, "phase", where)
        if phase not in PHASES:
            r.fail(f"{where}.phase must be one of {', '.join(PHASES)}, not {phase!r}")
        parts = r.obj(d["parts"], f"{where}.parts") if "parts" in d else {}
        return cls(
            phase=phase,
            seconds=r.nonneg(d, "seconds", where),
            parts=tuple((str(k), r.nonneg(parts, str(k), f"{where}.parts")) for k in parts),
            since=r.string(d, "since", where, default=""),
            until=r.string(d, "until", where, default=""),
        )

    def label(self) -> str:
        """The phase as the table names it: ``"start-up (from process start)"``, ``"end (until this
        report)"`` for one still under way, else the phase."""
        since = f" (from {self.since})" if self.since else ""
        return self.phase + since + (f" (until {self.until})" if self.until else "")


def read_phase_times(d: Mapping[str, Any], source: str) -> Tuple[PhaseTime, ...]:
    """The optional ``phase_times`` array of a results file (empty in files written before it)."""
    r = Reader(source)
    return tuple(
        PhaseTime.from_dict(t, source=source, where=f"phase_times[{i}]")
        for i, t in enumerate(r.array(d, "phase_times", "", required=False))
    )


@functools.lru_cache(maxsize=1)
def process_start() -> Tuple[float, str]:
    """``(t, since)``: when this interpreter started on :func:`time.perf_counter`'s clock, and what
    that is: ``"process start"`` where the OS tells the process's start (Linux: ``/proc/self/stat``'s
    start time against ``CLOCK_BOOTTIME``, to the kernel's clock tick, 10 ms) and it is this
    interpreter's (:func:`start_of`), else ``"package import"`` (:data:`IMPORTED_AT`, which misses
    the interpreter's own start-up, about 20-50 ms, and the imports before the package's)."""
    age: Optional[float] = None
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time after boot
            now = time.perf_counter()
            age = time.clock_gettime(time.CLOCK_BOOTTIME) - started - (now - IMPORTED_AT)
        except (OSError, ValueError, IndexError, AttributeError):
            pass
    return start_of(age, IMPORTED_CPU_S, IMPORTED_AT)


def start_of(age_s: Optional[float], cpu_s: float, imported_at: float) -> Tuple[float, str]:
    """``(t, since)`` of :func:`process_start` from the process's age at the package's import
    (``age_s`` seconds, the OS's; None where it tells none), its CPU seconds by then and the import's
    :func:`time.perf_counter` time: the process's start, ``imported_at - age_s``, where its age is
    not negative and it waited at most :data:`MAX_WAIT_BEFORE_IMPORT_S` of it; else the package's
    import. A process that waited longer ran something before this interpreter: a shell keeps its
    process, and its start, when it exec's its last command, so ``bash -c "pip install . &&
    apple-roofline run"`` would count the install as the tool's start-up."""
    if age_s is not None and 0 <= age_s and age_s - cpu_s <= MAX_WAIT_BEFORE_IMPORT_S:
        return imported_at - age_s, "process start"
    return imported_at, "package import"


class OutsideClock:
    """The time a study spends outside its suites, kept as it goes: its start-up from ``started``
    (``(time.perf_counter() time, what it is)``, e.g. :func:`process_start`'s; default: this
    construction, "the runner's start"), whose first part, ``imports``, runs to this construction,
    and whose further parts :meth:`step` times; and the span of its suites (:meth:`suites_begin`,
    :meth:`suites_done`). :meth:`phases` gives the :class:`PhaseTime` records, in seconds."""

    def __init__(self, started: Optional[Tuple[float, str]] = None) -> None:
        self.origin, self.since = started or (time.perf_counter(), "the runner's start")
        self.parts: List[Tuple[str, float]] = [("imports", time.perf_counter() - self.origin)]
        #: when the first suite started and the last one ended (perf_counter; 0: not yet)
        self.suites_start = self.suites_end = 0.0

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Time a step of the start-up as its part ``name`` (seconds, kept even when it raises)."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.parts.append((name, time.perf_counter() - t))

    def suites_begin(self) -> None:
        """The first suite starts now: the start-up ends."""
        self.suites_start = time.perf_counter()

    def suites_done(self) -> None:
        """The last suite has ended."""
        self.suites_end = time.perf_counter()

    def phases(self, times: Sequence[SuiteTime]) -> Tuple[PhaseTime, ...]:
        """The start-up and the time between suites, as far as known: none before the first suite;
        the time between suites (the suites' span less their ``times``) once the last one ended."""
        if not self.suites_start:
            return ()
        startup = PhaseTime(START_UP, max(0.0, self.suites_start - self.origin), tuple(self.parts), since=self.since)
        if not self.suites_end:
            return (startup,)
        between = self.suites_end - self.suites_start - sum(t.seconds for t in times)
        return (startup, PhaseTime(BETWEEN, max(0.0, between)))


class EndClock:
    """A study's end phase as its files are written: from the last suite's end (``origin``, the
    :func:`time.perf_counter` time its start-up counts from, plus its suites and phases, seconds)
    with named parts. :attr:`active` is False for a study without a start-up phase (none of its
    suites started): there is nothing to count the end from, and it gets no end phase."""

    def __init__(self, origin: float, times: Sequence[SuiteTime], phases: Sequence[PhaseTime]) -> None:
        self.active = any(p.phase == START_UP for p in phases)
        self.start = origin + wall_seconds(times, phases) if self.active else 0.0
        self.parts: List[Tuple[str, float]] = []

    def part(self, name: str, since: float) -> None:
        """Keep the part ``name``: the seconds from ``since`` (perf_counter) to now (none when inactive)."""
        if self.active:
            self.parts.append((name, max(0.0, time.perf_counter() - since)))

    def add(self, name: str, seconds: float) -> None:
        """Keep the part ``name`` of ``seconds`` measured elsewhere (a drawing job's)."""
        if self.active:
            self.parts.append((name, seconds))

    def phase(self, until: str = "") -> PhaseTime:
        """The end phase as of now (``until``: what it is shown up to, "" for the whole).

        Raises:
            ValueError: the clock is not :attr:`active`.
        """
        if not self.active:
            raise ValueError("a study without a start-up phase has no end phase")
        return PhaseTime(END, max(0.0, time.perf_counter() - self.start), tuple(self.parts), until=until)

    def with_end(self, doc: D, until: str = "") -> D:
        """``doc`` (a study with ``phase_times``) with its end phase as of now added (:meth:`phase`);
        ``doc`` itself when the clock is not :attr:`active`."""
        if not self.active:
            return doc
        return dataclasses.replace(doc, phase_times=(*doc.phase_times, self.phase(until)))  # type: ignore[type-var]


def wall_seconds(times: Sequence[SuiteTime], phases: Sequence[PhaseTime]) -> float:
    """The study's wall time: its suites' and its phases' seconds, which follow one another."""
    return sum(t.seconds for t in times) + sum(p.seconds for p in phases)


def read_suite_times(d: Mapping[str, Any], source: str) -> Tuple[SuiteTime, ...]:
    """The optional ``suite_times`` array of a results file (empty in files written before it)."""
    r = Reader(source)
    return tuple(
        SuiteTime.from_dict(t, source=source, where=f"suite_times[{i}]")
        for i, t in enumerate(r.array(d, "suite_times", "", required=False))
    )


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
        return SuiteTime(
            self.suite,
            time.perf_counter() - self.start,
            self.budget_s,
            self.measured,
            self.cut,
            self.planned,
            self.stopped_before,
        )


def _not_measured(t: SuiteTime) -> str:
    """``"3 of 4 planned cases measured; not measured from stream/triad/fp32 n=… on"``: what a cut
    suite lacks."""
    done = (
        f"{t.measured} of {t.planned} planned cases"
        if t.planned
        else f"{t.measured} case{'' if t.measured == 1 else 's'}"
    )
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
    return (
        f"suite {t.suite} was cut short by its {t.budget_s:g} s time budget: {_not_measured(t)} "
        f"(raise it with --budget {t.suite}=SECONDS)"
    )


def time_rows(times: Sequence[SuiteTime], phases: Sequence[PhaseTime] = ()) -> List[Tuple[str, ...]]:
    """Rows of the "Time per suite" table (columns :data:`TIME_HEADER`): the start-up phase, each
    suite, the total of the suites (when more than one), the phases after them and, with any
    phase, the ``wall`` total of all rows (:func:`wall_seconds`)."""
    rows: List[Tuple[str, ...]] = []

    def phase_rows(which: Sequence[str]) -> None:
        rows.extend((p.label(), "", f"{p.seconds:.1f}", "", "") for p in phases if p.phase in which)

    phase_rows((START_UP,))
    for t in times:
        status = CUT_STATUS if t.cut else "complete"
        rows.append((t.suite, str(t.measured), f"{t.seconds:.1f}", f"{t.budget_s:g}" if t.budget_s else "none", status))
    if len(times) > 1:
        rows.append(("total", str(sum(t.measured for t in times)), f"{sum(t.seconds for t in times):.1f}", "", ""))
    phase_rows((BETWEEN, END))
    if phases:
        rows.append(("wall", "", f"{wall_seconds(times, phases):.1f}", "", ""))
    return rows


def time_notes(times: Sequence[SuiteTime], phases: Sequence[PhaseTime] = ()) -> Tuple[str, ...]:
    """The notes under the time table of :func:`time_rows`: the suites cut by their budget; with
    phases, what they hold; for an end phase read before it ended, where the whole one is."""
    cut = [t.suite for t in times if t.cut]
    notes = [f"Cut short by its time budget: {', '.join(cut)} (the remaining cases were not measured)."] if cut else []
    if phases:
        notes.append(
            "Outside the suites: start-up (imports, opening the device, loading its libraries, telemetry, "
            "a quick run's plan), between suites (tuning, clock readings, preparing a suite) and end "
            "(the reports and figures, drawn side by side where the machine has the cores)."
        )
    if any(p.until for p in phases):
        notes.append("The end phase is shown until this report was drawn; the results file holds it to the last file.")
    return tuple(notes)


def time_line(times: Sequence[SuiteTime], phases: Sequence[PhaseTime] = ()) -> str:
    """The time table in one line, for a terminal: ``"start-up 2.1 s, stream 3.4 s, …, sweep 4.5 s
    (cut short by its budget); total 7.9 s; end 2.4 s; wall 12.4 s"``."""

    def phase_text(which: Sequence[str]) -> List[str]:
        return [f"{p.label()} {p.seconds:.1f} s" for p in phases if p.phase in which]

    suites = ", ".join(
        [*phase_text((START_UP,))]
        + [f"{t.suite} {t.seconds:.1f} s" + (" (cut short by its budget)" if t.cut else "") for t in times]
    )
    return "; ".join(
        [suites, f"total {sum(t.seconds for t in times):.1f} s", *phase_text((BETWEEN, END))]
        + ([f"wall {wall_seconds(times, phases):.1f} s"] if phases else [])
    )
