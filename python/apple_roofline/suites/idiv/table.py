"""The integer-divide table of a run's report: what one divide costs by where its divisor comes from.

Built from the run's ``idiv`` measurements (:mod:`.suite`); None when it has
none, so the section appears only in runs that measured the suite. Per measurement:

- **ns/op** = median time per launch / operations per launch × 1e9: the device's throughput per
  divide (or modulo) with every lane busy, in nanoseconds;
- **cycles/op/lane** = ns/op × clock [GHz] × lanes, where clock × lanes, the FP32 FMA lane-cycles
  per second, is the run's theoretical "FP32 vector" ceiling / 2 FLOP per FMA. Lanes are the FP32
  FMA lanes that issue each clock (GPU: ALUs; CPU: cores × 32-bit vector lanes × FMA pipes) and the
  clock is the theoretical model's (the CPU's measured all-core clock; a GPU's top clock). So the
  column is the cost of one divide in FMA issue slots of one lane, the unit of the AGX article's
  ~5 / ~80 / ~80 / ~730 cycles. Blank, with a note saying why, when the run has no theoretical FP32
  peak;
- **argument / constant**: on the ``argument`` rows, the argument variant's time over the
  ``constant`` variant's for the same op and dtype: how many times slower the same divide is when
  the divisor arrives at dispatch than when it is a specialisation constant.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

from ...roofline.model.run import Run
from ...study.records import Measurement
from ...study.table import Table
from ...text import DASH, sig_figs
from ...timing.clocks import theoretical_clock_mhz

__all__ = ["IDIV_SUITE", "idiv_table", "fma_lane_cycles_per_s"]

#: The suite whose measurements the table shows.
IDIV_SUITE = "idiv"
#: Where the divisor comes from, by the kernel name's suffix (apple_roofline.suites.idiv.kernels).
_SOURCES = {
    "pow2_literal": "power-of-two literal",
    "literal": "literal",
    "constant": "specialisation constant",
    "argument": "kernel argument",
}


def _split(kernel: str) -> Tuple[str, str]:
    """("div", "argument") of "div_argument"."""
    op, _, variant = kernel.partition("_")
    return op, variant


def fma_lane_cycles_per_s(run: Run) -> Optional[float]:
    """clock [Hz] × FP32 FMA lanes of the run's device: its theoretical "FP32 vector" ceiling
    (GFLOP/s) × 1e9 / 2; None without one."""
    for c in run.ceilings:
        if c.source == "theoretical" and c.name == "FP32 vector" and c.value > 0:
            return c.value * 1e9 / 2.0
    return None


def _clock_hz(device: Mapping[str, object]) -> Optional[float]:
    """The theoretical model's clock in Hz (:func:`~apple_roofline.timing.clocks.theoretical_clock_mhz`), or None."""
    mhz = theoretical_clock_mhz(device)
    return mhz * 1e6 if mhz is not None else None


def _notes(run: Run, rate: Optional[float]) -> Tuple[str, ...]:
    notes = [
        "ns/op: median time per launch / divides per launch (every lane busy). "
        "argument / constant: the same divide with the divisor as a kernel argument, over the "
        "specialisation constant (how many times slower)."
    ]
    if rate is None:
        notes.append(
            "cycles/op/lane: blank, because the run has no theoretical FP32 vector peak, so "
            "neither its clock nor its FMA lane count is known."
        )
        return tuple(notes)
    clock = _clock_hz(run.device)
    how = f" ({rate / clock:.4g} lanes at {sig_figs(clock / 1e9)} GHz)" if clock is not None else ""
    notes.append(
        f"cycles/op/lane = ns/op × clock × lanes, where clock × lanes = the theoretical FP32 vector "
        f"peak / 2 = {sig_figs(rate / 1e9)} G FMA lane-cycles/s{how}: the cost of one divide "
        f"in FMA issue slots of one lane."
    )
    return tuple(notes)


def idiv_table(run: Run) -> Optional[Table]:
    """The idiv section's table (module docstring), or None when ``run`` has no idiv measurement.

    Columns: op, dtype, divisor from, d, ns/op, cycles/op/lane, argument / constant, valid. An
    invalid measurement is shown with ``**NO**`` and no ratio is formed with it."""
    ms: List[Measurement] = [m for m in run.measurements if m.suite == IDIV_SUITE]
    if not ms:
        return None
    rate = fma_lane_cycles_per_s(run)
    ns: Dict[Tuple[str, str, str], float] = {}
    for m in ms:
        if m.valid and m.flops > 0:
            op, variant = _split(m.kernel)
            ns[(op, variant, m.dtype)] = m.median_s / m.flops * 1e9
    rows: List[Tuple[str, ...]] = []
    for m in ms:
        op, variant = _split(m.kernel)
        t = m.median_s / m.flops * 1e9 if m.flops > 0 else None
        cycles = sig_figs(t * 1e-9 * rate) if (t is not None and rate is not None) else DASH
        ratio = DASH
        arg, const = ns.get((op, "argument", m.dtype)), ns.get((op, "constant", m.dtype))
        if variant == "argument" and m.valid and arg is not None and const:
            ratio = f"{arg / const:.3g}×"
        rows.append(
            (
                op,
                m.dtype,
                _SOURCES.get(variant, variant),
                str(m.params.get("divisor", DASH)),
                sig_figs(t) if t is not None else DASH,
                cycles,
                ratio,
                "yes" if m.valid else "**NO**",
            )
        )
    header = ("Op", "dtype", "Divisor from", "d", "ns/op", "cycles/op/lane", "argument / constant", "Valid")
    return Table(header, tuple(rows), "lllrrrrl", _notes(run, rate))
