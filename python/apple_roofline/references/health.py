"""A health check of runs against a measured reference run: the outlier rule of a node run
(``--device cuda:all``, :mod:`~apple_roofline.node.report`) with the reference in place of the
node's median.

A run of the reference's kind of device (:meth:`~.runs.RunReference.matches`) is flagged on each measured
ceiling of the reference that is more than ``outlier_pct`` % below the reference's value (default
:data:`~apple_roofline.node.report.DEFAULT_OUTLIER_PCT`, the node's), on each the run lacks, and when it is
partial (interrupted, or a suite cut by its budget). Ceilings the run has beyond the reference's are not
judged. A run of another device is not checked: the rule holds a GPU to one of its kind, and an H100's
ceilings say nothing about an Apple M5's health.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from ..node.report import DEFAULT_OUTLIER_PCT, metrics_of
from ..roofline.model.run import Run
from ..study.markdown import status_text
from ..study.table import Table
from ..text import DASH, sig_figs
from .runs import RunReference

__all__ = ["HealthFlag", "health_flags", "health_table"]


@dataclass(frozen=True)
class HealthFlag:
    """One thing wrong with a run against the reference: ``tag`` (the run's, ``"B"``), the
    ``ceiling`` (``""`` for the run as a whole), its ``unit``, the ``reference`` value, the run's
    ``value`` (None: it lacks the ceiling), ``below_pct`` (how far below the reference, in %;
    None where not a number), the ``reference_name`` and, for the run as a whole, its ``status``
    (:func:`~apple_roofline.study.markdown.status_text`)."""

    tag: str
    ceiling: str
    unit: str
    reference: Optional[float]
    value: Optional[float]
    below_pct: Optional[float]
    reference_name: str
    status: str = ""

    def sentence(self) -> str:
        """One line: ``"B: GEMM FP16 680,000 GFLOP/s is 10.0 % below the reference h100's 756,000
        GFLOP/s"``."""
        ref = f"the reference {self.reference_name}'s"
        if self.ceiling == "":
            return f"{self.tag}: {self.status}"
        if self.value is None:
            return f"{self.tag}: no measured {self.ceiling}, which {ref} run has"
        return (
            f"{self.tag}: {self.ceiling} {sig_figs(self.value)} {self.unit} is {self.below_pct:.1f} % below "
            f"{ref} {sig_figs(self.reference or 0.0)} {self.unit}"
        )


def health_flags(
    ref: RunReference, runs: Sequence[Run], tags: Sequence[str], outlier_pct: float = DEFAULT_OUTLIER_PCT
) -> List[HealthFlag]:
    """Every flag of the runs (module docstring), in run then ceiling order; runs of another kind
    of device are skipped.

    Raises:
        ValueError: ``outlier_pct`` negative or not finite, or not one tag per run.
    """
    if not 0.0 <= outlier_pct < float("inf"):
        raise ValueError(f"outlier_pct {outlier_pct!r} is out of range (valid: 0 or more)")
    if len(tags) != len(runs):
        raise ValueError(f"{len(tags)} tags for {len(runs)} runs")
    want = metrics_of(ref.run)
    out: List[HealthFlag] = []
    for tag, run in zip(tags, runs):
        if not ref.matches(run):
            continue
        if run.partial:
            out.append(HealthFlag(tag, "", "", None, None, None, ref.name, status_text(run)))
        have = metrics_of(run)
        for metric, target in want.items():
            value = have.get(metric)
            if value is None:
                out.append(HealthFlag(tag, metric.name, metric.unit, target, None, None, ref.name))
            elif target and (target - value) / target * 100.0 > outlier_pct:
                out.append(
                    HealthFlag(
                        tag, metric.name, metric.unit, target, value, (target - value) / target * 100.0, ref.name
                    )
                )
    return out


def health_table(
    ref: RunReference, runs: Sequence[Run], tags: Sequence[str], outlier_pct: float = DEFAULT_OUTLIER_PCT
) -> Tuple[Table, List[HealthFlag]]:
    """The health check as a table (one row per flag; its notes say the rule, which runs were
    checked and which were not, and "None" where nothing is flagged) and the flags themselves.

    Raises:
        ValueError: from :func:`health_flags`.
    """
    flags = health_flags(ref, runs, tags, outlier_pct)
    checked = [t for t, r in zip(tags, runs) if ref.matches(r)]
    others = [f"{t} ({r.device_name}, {r.backend})" for t, r in zip(tags, runs) if not ref.matches(r)]
    notes = [
        f"Reference {ref.name}: {ref.device}, {ref.recorded()}. Outlier rule (as for a node run, cuda:all): "
        f"a run's measured ceiling more than {outlier_pct:g} % below the reference's, or one the reference "
        "has and the run lacks, or a partial run."
    ]
    if others:
        notes.append(
            f"Not checked, another device than the reference's {ref.device}: {', '.join(others)}; "
            "their ratios to the reference are in the tables above."
        )
    if checked and not flags:
        notes.append(
            f"None flagged: every measured ceiling of {', '.join(checked)} is within {outlier_pct:g} % "
            "of the reference's or above it."
        )
    rows = tuple(
        (
            f.tag,
            f.ceiling or "(the run)",
            f.unit or DASH,
            sig_figs(f.reference) if f.reference is not None else DASH,
            sig_figs(f.value) if f.value is not None else ("missing" if f.ceiling else f.status),
            f"{f.below_pct:.1f} %" if f.below_pct is not None else DASH,
        )
        for f in flags
    )
    return Table(
        ("Run", "Ceiling", "Unit", "Reference", "Run's value", "Below by"), rows, "lllrrr", tuple(notes)
    ), flags
