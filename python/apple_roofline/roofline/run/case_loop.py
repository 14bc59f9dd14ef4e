"""Measuring a suite's cases one after another (docs/design/measurement.md, "Measurement", "Validation" and "Time
budgets"): each case's kernel built, timed, its output checked (or compared while the next case
measures, :mod:`.later`), measured again where its samples are noisy, kept by the journal and
handed to the run; a case the journal already holds is taken from it. The roofline runner
(:mod:`.runner`) calls :func:`measure_suite_cases` for each suite it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Mapping, Optional, Tuple, Union

from ...study.journal import Journal, record_key
from ...study.progress import Progress, announce_doing
from ...study.records import REMEASURED_PARAM, Measurement, Skipped
from ...study.timing import SuiteClock
from ...suites.base import OutputCheck, kernel_key
from ...telemetry import Sampler
from ...timing.stats import CV_WARN
from .cases import judge, time_case
from .later import LaterChecks, Settled

__all__ = ["Outcome", "CaseSettings", "measure_suite_cases", "outcome_words", "rate_words", "params_summary"]


#: What measuring one case gives: its Measurement (measured, or kept by a resumed journal), or why
#: the device cannot run its kernel.
Outcome = Union[Measurement, Skipped]


@dataclass(frozen=True)
class CaseSettings:
    """How every case of a run is timed: ``reps`` samples after at most ``max_warmup_s`` of warm-up,
    each sample at least ``min_window_s`` long in all (0: as short as the measurement loop makes
    it), power and clocks read by ``sampler``; ``later``, where given, compares the outputs of the
    cases whose check is an OutputCheck while the next case measures (:mod:`.later`)."""

    reps: int
    max_warmup_s: float
    sampler: Optional[Sampler] = None
    min_window_s: float = 0.0
    later: Optional[LaterChecks] = None


def measure_suite_cases(
    suite: Any, settings: CaseSettings, clock: SuiteClock, journal: Journal, progress: Optional[Progress] = None
) -> Iterator[Outcome]:
    """Measure every case of ``suite``, yielding each outcome as soon as it is known (so that an
    interrupted run keeps all that its journal keeps). The suite's buffers (held by its cases) are
    released when this ends, before the next suite allocates. ``clock`` counts the measured cases and is checked before
    each case: once its budget is spent the remaining cases are not measured and it is marked
    ``cut`` (docs/design/budgets.md, "Time budgets"). ``journal`` keeps each measurement as it finishes; a
    case its resumed journal holds is taken from it, not measured (:meth:`Journal.keep`,
    docs/design/files.md, "Journal and resume").

    With ``settings.later`` and a suite that does not plan from its measurements (``adaptive``), a
    case whose check is an OutputCheck is compared on the worker while the next case measures; it is
    journaled and yielded once settled (before the next read of an output, at the suite's end, and
    on an interrupt or a device error, which it then re-raises)."""
    yield from _CaseLoop(suite, settings, clock, journal, progress).run()


class _CaseLoop:
    """:func:`measure_suite_cases`'s state: the settled comparisons not yet yielded, and the steps that
    hand an outcome over (:meth:`kept`), take a settled comparison (:meth:`settle`) and yield those
    taken (:meth:`flush`)."""

    def __init__(
        self, suite: Any, settings: CaseSettings, clock: SuiteClock, journal: Journal, progress: Optional[Progress]
    ) -> None:
        self.suite, self.settings, self.clock, self.journal, self.progress = suite, settings, clock, journal, progress
        adaptive = getattr(suite, "adaptive", False)
        self.later = settings.later if settings.later is not None and not adaptive else None
        self.settled: List[Settled] = []

    def settle(self) -> None:
        """Take the comparison under way, journaled (before any read of an output: it reads the scratch)."""
        got = self.later.settle() if self.later is not None else None
        if got is not None:
            self.journal.record(got.key, Measurement.to_dict(got.measurement))
            self.settled.append(got)

    def kept(self, outcome: Outcome, label: str, words: str) -> Iterator[Outcome]:
        """Yield ``outcome`` (counted where measured), then hand it to the suite and the progress line."""
        if isinstance(outcome, Measurement):
            self.clock.measured += 1
        yield outcome  # kept by the caller before anything else runs: what the journal holds, the run holds
        if isinstance(outcome, Measurement):
            self.suite.record(outcome)
        if self.progress:
            self.progress.advance(f"{label}: {words}")

    def flush(self) -> Iterator[Outcome]:
        """Yield every settled comparison, in the order they settled."""
        while self.settled:
            got = self.settled.pop(0)
            yield from self.kept(got.measurement, got.label, outcome_words(got.measurement))

    def run(self) -> Iterator[Outcome]:
        """The cases one after another until the clock's budget cuts them (:func:`measure_suite_cases`)."""
        suite, progress = self.suite, self.progress
        try:
            announce_doing(progress, f"allocating and writing {suite.name}'s inputs")
            for case in suite.cases():
                k = case.kernel
                label = f"{k.suite}/{k.name}/{k.dtype} {params_summary(case.params)}"
                if self.clock.cut_here(label.strip()):
                    break
                outcome, words = _run_case(
                    suite, case, label, self.settings, self.journal, progress, self.later, self.settle
                )
                yield from self.flush()
                if outcome is not None:
                    yield from self.kept(outcome, label, words)
            self.settle()
            yield from self.flush()
        except GeneratorExit:
            self.settle()  # journaled, though the caller takes nothing more
            raise
        except BaseException:
            self.settle()  # an interrupt or a device error: the case being compared is host work, kept
            yield from self.flush()
            raise


def outcome_words(m: Measurement) -> str:
    """The words a measured case's progress line ends with: its rate, INVALID, or noisy with its CV."""
    return rate_words(m) + ("" if m.valid else " INVALID") + (f" (noisy: CV {m.cv:.0%})" if m.valid and m.noisy else "")


def _run_case(
    suite: Any,
    case: Any,
    label: str,
    settings: CaseSettings,
    journal: Journal,
    progress: Optional[Progress],
    later: Optional[LaterChecks] = None,
    settle: Callable[[], None] = lambda: None,
) -> Tuple[Optional[Outcome], str]:
    """One case's outcome and the words its progress line ends with; ``(None, "")`` where ``later``
    compares it (``settle`` hands it over once it has its verdict)."""
    from ..._native import _core

    k = case.kernel
    block = suite.constants(k).get("BLOCK")  # the table's, or the one --tune chose: part of what is measured
    key = record_key(kernel_key(k), params={**case.params, **({"BLOCK": block} if block else {})})
    stored = journal.stored(key)
    if stored is not None:  # docs/design/files.md, "Journal and resume"
        return Measurement.from_dict(stored, source=str(journal.path), where=key), "resumed"
    announce_doing(progress, f"{label}: measuring and validating")

    def defer(timed: Measurement) -> None:
        assert later is not None
        later.defer(case, timed, key, label)

    try:
        m = _measure(case, label, settings, progress, defer if later is not None else None, settle)
    except _core.UnsupportedError as exc:
        return Skipped(k.suite, k.name, k.dtype, str(exc)), "unsupported"
    if m is None:
        return None, ""
    journal.record(key, Measurement.to_dict(m))
    return m, outcome_words(m)


def _measure(
    case: Any,
    label: str,
    settings: CaseSettings,
    progress: Optional[Progress],
    defer: Optional[Callable[[Measurement], None]] = None,
    settle: Callable[[], None] = lambda: None,
) -> Optional[Measurement]:
    """Build ``case``'s kernel, time and validate it; a noisy measurement is made once more
    (docs/design/measurement.md, "Noisy samples"). A case with ``few_reps`` below the run's ``reps`` is timed
    with that many samples first and kept when valid with a CV at most ``CV_WARN``; otherwise it
    is measured again with the run's count (docs/design/matrix.md, "The GEMM ladder").

    With ``defer``, a case whose check is an OutputCheck and whose samples are not noisy is handed
    to it after its timing (its output read, compared later): None is returned. ``settle`` is called
    before any output is read (the comparison under way is then done).

    Raises:
        _core.UnsupportedError: the device cannot run the kernel.
    """
    kernel = case.make_kernel()

    def timed(extra: Optional[Mapping[str, Any]] = None, reps: int = settings.reps) -> Measurement:
        return time_case(
            case,
            kernel,
            reps=reps,
            max_warmup_s=settings.max_warmup_s,
            sampler=settings.sampler,
            min_window_s=settings.min_window_s,
            extra=extra,
        )

    def checked(m: Measurement) -> Measurement:  # the comparison under way settled before this read
        settle()
        return judge(case, m, case.check())

    few = getattr(case, "few_reps", None)
    if few is not None and few < settings.reps:
        m = checked(timed(reps=few))  # a size that draws the curve: fewer samples when they are quiet
        if m.valid and m.cv <= CV_WARN:
            return m
        case.reset()
    m = timed()
    if defer is not None and few is None and isinstance(case.check, OutputCheck) and not m.noisy:
        settle()
        defer(m)
        return None
    m = checked(m)
    if m.valid and m.noisy:
        announce_doing(progress, f"{label}: CV {m.cv:.0%}, measuring again")
        case.reset()
        m = checked(timed({REMEASURED_PARAM: round(m.cv, 4)}))
    return m


def rate_words(m: Measurement) -> str:
    """A measurement's rates for a progress line: GFLOP/s where it counts FLOPs and is no bandwidth
    kernel, GB/s where it counts bytes and is no compute kernel (a peak kernel's few bytes say
    nothing, nor a STREAM triad's two FLOPs an element), power where sampled: ``"113.0 GFLOP/s"``,
    ``"21.2 GB/s"``, ``"2.3 GFLOP/s, 13.8 GB/s, 41 W"`` (a sweep point)."""
    parts = [f"{m.gflops:.1f} GFLOP/s"] if m.flops > 0 and m.ceiling_kind != "bandwidth" else []
    if m.bytes > 0 and (m.ceiling_kind != "compute" or not parts):
        parts.append(f"{m.gbps:.1f} GB/s")
    if m.power_w is not None:
        parts.append(f"{m.power_w:.0f} W")
    return ", ".join(parts)


def params_summary(params: Mapping[str, Any]) -> str:
    """The size parameters of a measurement for messages: ``"F=64 n=1048576"`` (F, m and n, and the
    rule suites' level, stride and threadgroup_bytes)."""
    keys = [k for k in ("F", "m", "n", "level", "stride", "threadgroup_bytes") if k in params]
    return " ".join(f"{k}={params[k]}" for k in keys)
