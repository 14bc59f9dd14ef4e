"""The ceilings at the clock (docs/design/clocks.md, "Clocks"): each measured compute ceiling beside its
theoretical value at the maximum clock and at the effective clock its measurement ran at.

A theoretical compute ceiling is rate per clock × clock, given at the device's maximum clock
(:func:`~apple_roofline.timing.clocks.theoretical_clock_mhz`); at the effective clock ``f`` it is
theoretical × f / maximum. The fraction of that says how close the kernel came to the hardware at
the clock it really had, the fraction of the maximum how close to the data sheet. Bandwidth
ceilings do not scale with the core clock and are left out.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ...errors import reasons_text
from ...study.records import Ceiling, Measurement
from ...study.table import Table
from ...text import DASH, sig_figs
from ...timing.clocks import CLOCK_PARAM, EFFECTIVE, EFFECTIVE_SOURCE, theoretical_clock_mhz
from ..model.efficiency import ceiling_measurements
from ..model.limits import CLOCK_MISREAD, Limits, classes_over_limit, flagged_cell, share_text
from ..model.run import Run

__all__ = ["clock_table", "source_kind"]


def source_kind(source: object) -> str:
    """A measurement's ``effective_clock_source`` in a word: "measured", "reported" or "none"."""
    text = str(source or "")
    return text.split(":", 1)[0] if text.split(":", 1)[0] in ("measured", "reported") else "none"


#: A row of the table: ceiling, GFLOP/s, effective MHz, theoretical, share, theoretical at the clock,
#: share, clock verdict.
_Row = Tuple[str, ...]


def _clock_row(name: str, value: float, m: Optional[Measurement], theoretical: Ceiling, limits: Limits) -> _Row:
    """The row of ceiling ``name`` (``value`` GFLOP/s, set by ``m`` where known) beside its
    ``theoretical`` ceiling at the maximum clock and at ``m``'s effective clock (:meth:`~.limits.Limits.limit`)."""
    lim = limits.limit(m) if m is not None else None
    mhz = lim.mhz if lim is not None else None
    clocked = lim.value if lim is not None and mhz is not None else None
    why = m.over_limit.reason if m is not None and m.over_limit is not None else CLOCK_MISREAD
    if mhz is not None and m is not None:
        kind = source_kind(m.params.get(EFFECTIVE_SOURCE)) if EFFECTIVE in m.params else "reported"
        clock = f"{mhz:.0f} ({kind})"
    else:
        clock = DASH
    return (
        name,
        flagged_cell(m, sig_figs(value), "GFLOP/s") if m is not None else sig_figs(value),
        clock,
        sig_figs(theoretical.value),
        share_text(value / theoretical.value, why),
        sig_figs(clocked) if clocked is not None else DASH,
        share_text(value / clocked, why) if clocked is not None else DASH,
        str(m.params.get(CLOCK_PARAM, DASH)) if m is not None else DASH,
    )


def _clock_notes(max_mhz: float, steady: object) -> Tuple[str, ...]:
    """The table's notes: how the theoretical ceilings scale with the clock and where the effective
    clock comes from, why no share is above 100 %, and the clock verdict against the run's ``steady``
    clock (MHz, where recorded)."""
    return (
        f"The theoretical compute ceilings are given at {max_mhz:.0f} MHz (the device's maximum clock); at the "
        "clock the kernel ran at they are theoretical × effective MHz / maximum. Effective MHz is the mean "
        "clock of the timed samples of the measurement that set the ceiling (the highest reading where the "
        "GPU stepped its clock down within them): measured by the device where "
        "the backend can (CUDA: %clock64 / %globaltimer per SM in probed launches between the samples, a "
        "probe kernel around cuBLAS; CPU: perf_event_open cycles), else the clock the sampler reported; each "
        "measurement's effective_clock_source says which.",
        "No share is above 100 %: within the timer's tolerance above a limit it is shown as 100 %, beyond "
        "it as ⚠ with the reason; a measurement above its pipe at its clock sets no ceiling "
        '(docs/design/limits.md, "Physical limits").',
        "Clock: steady, or below steady when the effective clock is more than 5 % under the run's steady clock"
        + (
            f" ({float(steady):.0f} MHz, the median of the measurements' clocks)."
            if isinstance(steady, (int, float))
            else "."
        ),
    )


def clock_table(run: Run) -> Optional[Table]:
    """Each measured compute ceiling that has a theoretical one of the same name: GFLOP/s, the
    effective clock of the measurement that set it (MHz, measured or reported), the theoretical value
    at the maximum clock and at that effective clock, the fraction of each (never above 100 %:
    :func:`~.limits.share_text`), and the steady-clock verdict; then, flagged, each class whose every
    measurement lies above its pipe (:func:`~.limits.classes_over_limit`). None when the run has no
    such pair or no theoretical clock."""
    max_mhz = theoretical_clock_mhz(run.device)
    if max_mhz is None:
        return None
    theory = {c.name: c for c in run.ceilings if c.source == "theoretical" and c.kind == "compute"}
    setters = ceiling_measurements(run.measurements)
    limits = Limits.of(run.ceilings, run.device)
    # each measured ceiling, then each class whose every measurement lies above its limit, flagged
    over = classes_over_limit(run.measurements)
    shown = [
        (c.name, c.value, setters.get(c.name)) for c in run.ceilings if c.source == "measured" and c.name in theory
    ]
    shown += [(name, m.gflops, m) for name, m in over.items() if name in theory]
    rows = [_clock_row(name, value, m, theory[name], limits) for name, value, m in sorted(shown, key=lambda s: -s[1])]
    if not rows:
        return None
    if all(r[2] == DASH for r in rows):
        return _without_clocks(rows, max_mhz, [setters[c] for c in (r[0] for r in rows) if c in setters])
    header = (
        "Ceiling",
        "GFLOP/s",
        "Effective MHz",
        f"Theoretical at {max_mhz:.0f} MHz",
        "of it",
        "Theoretical at effective MHz",
        "of it",
        "Clock",
    )
    return Table(header, tuple(rows), "lrrrrrrl", _clock_notes(max_mhz, run.device.get("steady_clock_mhz")))


def _without_clocks(rows: List[Tuple[str, ...]], max_mhz: float, setters: List[Measurement]) -> Table:
    """The table when no ceiling's measurement has an effective clock (a CPU without a readable cycle
    counter, a backend that measures none): the columns at the effective clock left out, and one
    sentence saying why, from the measurements' ``effective_clock_source``."""
    reasons = [str(m.params.get(EFFECTIVE_SOURCE, "")).split(":", 1)[-1].strip() for m in setters]
    why = reasons_text(reasons) or "no measurement recorded one"
    notes = (
        f"The theoretical compute ceilings are given at {max_mhz:.0f} MHz (the device's maximum clock). "
        f"No effective clock is known for the measurements that set these ceilings, so the columns at "
        f"the effective clock are left out: {why}.",
    )
    return Table(
        ("Ceiling", "GFLOP/s", f"Theoretical at {max_mhz:.0f} MHz", "of it"),
        tuple((r[0], r[1], r[3], r[4]) for r in rows),
        "lrrr",
        notes,
    )
