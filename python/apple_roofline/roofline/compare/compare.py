"""Two or more runs side by side (``apple-roofline compare``): every ceiling's value in each run and
its ratio to a baseline, as tables that the Markdown and the HTML views render alike.

Runs are tagged A, B, C … in the order given (AA, AB … after Z). The baseline is one of the runs
(the first by default) or ``"median"``: the median, per ceiling, of the runs that have it — the
reference of a node's GPUs, where no one GPU is the right one. A ratio is the run's value divided
by the baseline's (a run 10 % slower reads 0.90×); where either lacks the ceiling it is ``—``.
Ceilings are matched by (source, kind, name); ridge points are each run's measured ones (compute
ceiling / measured bandwidth, :meth:`~.model.RooflineModel.ridge_table`); per-watt figures those of
:func:`~.efficiency.ceiling_efficiency`. Values have 3 significant figures, ratios 2 decimals.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar, Union

from ...study.markdown import status_text
from ...study.records import CEILING_KINDS
from ...study.table import Table
from ...text import DASH, date_of, sig_figs
from ..model.efficiency import ceiling_efficiency
from ..model.run import Run
from ..views.report import table_lines
from ..views.tables import model_of
from .paths import path_pairs, paths_table

__all__ = [
    "BASELINE_MEDIAN",
    "Baseline",
    "Comparison",
    "PublishedLine",
    "run_tags",
    "path_labels",
    "ceiling_key",
    "ceiling_values",
    "baseline_value",
    "ratio_text",
    "compare_tables",
    "compare_markdown",
    "partial_note",
]

#: ``--baseline median``: the per-ceiling median of the runs that have the ceiling.
BASELINE_MEDIAN = "median"
#: The index of the baseline run, or :data:`BASELINE_MEDIAN`.
Baseline = Union[int, str]

K = TypeVar("K", bound=Hashable)


def run_tags(n: int) -> List[str]:
    """``n`` tags in spreadsheet order: A … Z, AA, AB …"""
    tags: List[str] = []
    for i in range(n):
        tag, k = "", i + 1
        while k:
            k, r = divmod(k - 1, 26)
            tag = chr(ord("A") + r) + tag
        tags.append(tag)
    return tags


def path_labels(paths: Sequence[Union[str, "os.PathLike[str]"]]) -> List[str]:
    """What tells each file apart: the path without the folders every path shares and without a
    file name they all share (``node1/cuda0/run.json``, ``node1/cuda1/run.json`` -> ``cuda0``,
    ``cuda1``); the file name alone for a single path. A file given again is labelled with its
    count (``a.json``, ``a.json (2)``): a run compared with itself."""
    parts = [os.path.normpath(os.path.abspath(os.fspath(p))).split(os.sep) for p in paths]
    labels = _distinct_labels(parts)
    seen: Dict[str, int] = {}
    out: List[str] = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def _distinct_labels(parts: Sequence[List[str]]) -> List[str]:
    """:func:`path_labels` of the split absolute paths ``parts``, before repeats are counted."""
    if len({tuple(p) for p in parts}) < 2:  # one file, perhaps given more than once: its name
        return [p[-1] for p in parts]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    rest = [p[common:] for p in parts]
    if len({r[-1] for r in rest}) == 1 and all(len(r) > 1 for r in rest):
        rest = [r[:-1] for r in rest]
    return ["/".join(r) for r in rest]


@dataclass(frozen=True)
class PublishedLine:
    """A published figure drawn as a ceiling beside the runs (``compare RUN --reference NAME -o``,
    :func:`apple_roofline.references.published_lines`): published, never measured by this tool, and
    labelled so in every figure.

    Attributes:
        name: the run's ceiling it is set beside (``"FP32 vector"``).
        kind: ``"bandwidth"`` (``value`` in GB/s) or ``"compute"`` (GFLOP/s).
        value: the figure, > 0 and finite.
        source: ``"measured"`` or ``"theoretical"``: the kind of the run's ceiling it is set beside
            (a benchmark's figure beside a measured one, a specification beside a theoretical one).
        where: the chip and engine it is for (``"Apple M5 GPU"``).
        note: what it is and where it stands, for the hover (the figure, its basis, the section of
            the source, the citation).

    Raises:
        ValueError: an unknown kind, or a value that is not positive and finite.
    """

    name: str
    kind: str
    value: float
    source: str
    where: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CEILING_KINDS:
            raise ValueError(f"published {self.name!r}: kind must be 'bandwidth' or 'compute', not {self.kind!r}")
        if not 0 < self.value < float("inf"):
            raise ValueError(f"published {self.name!r}: value must be positive and finite, not {self.value!r}")

    @property
    def unit(self) -> str:
        """``"GB/s"`` or ``"GFLOP/s"``."""
        return CEILING_KINDS[self.kind]

    @property
    def label(self) -> str:
        """``"FP32 vector, published (Apple M5 GPU)"``."""
        return f"{self.name}, published ({self.where})"


@dataclass(frozen=True)
class Comparison:
    """Runs to compare: ``runs`` (two or more; one is enough against a ``reference``), ``labels``
    (one per run: what tells its file apart, :func:`path_labels`; empty strings for none) and the
    ``baseline`` (a run's index, or :data:`BASELINE_MEDIAN`). ``reference``: the name of the
    reference the runs are compared with (``--reference``, :mod:`apple_roofline.references`; ""
    for none), whose ``sections`` (title, table) follow the comparison's own; ``published``: the
    reference's figures the figures draw beside the runs (:class:`PublishedLine`; empty for none).

    Raises:
        ValueError: fewer than two runs (one with a reference), labels not one per run, or a
            baseline index out of range.
    """

    runs: Tuple[Run, ...]
    labels: Tuple[str, ...] = ()
    baseline: Baseline = 0
    reference: str = ""
    sections: Tuple[Tuple[str, Table], ...] = ()
    published: Tuple[PublishedLine, ...] = ()

    def __post_init__(self) -> None:
        if len(self.runs) < (1 if self.reference else 2):
            raise ValueError(f"a comparison needs two or more runs, got {len(self.runs)}")
        if not self.labels:
            object.__setattr__(self, "labels", ("",) * len(self.runs))
        if len(self.labels) != len(self.runs):
            raise ValueError(f"{len(self.labels)} labels for {len(self.runs)} runs")
        b = self.baseline
        if b != BASELINE_MEDIAN and (not isinstance(b, int) or isinstance(b, bool) or not 0 <= b < len(self.runs)):
            raise ValueError(f"baseline {b!r} is neither a run (0 to {len(self.runs) - 1}) nor {BASELINE_MEDIAN!r}")

    @property
    def tags(self) -> List[str]:
        """A, B, C … one per run."""
        return run_tags(len(self.runs))

    @property
    def baseline_name(self) -> str:
        """``"A"`` (the baseline run's tag) or ``"the median"``."""
        return "the median" if self.baseline == BASELINE_MEDIAN else self.tags[int(self.baseline)]

    def titles(self) -> List[str]:
        """Each run's title: ``"<device> (<backend>) — <date>"``."""
        return [f"{r.device_name} ({r.backend}) — {date_of(r.created)}" for r in self.runs]

    def names(self) -> List[str]:
        """Each run in words: its title (:meth:`titles`), with its label where two titles are the
        same."""
        titles = self.titles()
        return [f"{t} [{lab}]" if lab and titles.count(t) > 1 else t for t, lab in zip(titles, self.labels)]


def partial_note(c: Comparison) -> Optional[str]:
    """The note under the overlaid rooflines when a run is partial: each such run's tag and status
    (:func:`~apple_roofline.study.markdown.status_text`); None when every run is complete."""
    parts = [f"{tag}: {status_text(r)}" for tag, r in zip(c.tags, c.runs) if r.partial]
    return "Partial runs, not every case drawn: " + "; ".join(parts) + "." if parts else None


def ceiling_key(source: str, kind: str, name: str) -> Tuple[str, str, str]:
    """How a ceiling is matched across runs: (source, kind, name)."""
    return (source, kind, name)


def ceiling_values(
    runs: Sequence[Run],
) -> Tuple[List[Tuple[str, str, str]], List[Dict[Tuple[str, str, str], float]], Dict[Tuple[str, str, str], str]]:
    """Every ceiling of ``runs``: the keys (:func:`ceiling_key`; measured before theoretical,
    bandwidth before compute, highest first as in the first run that has it), each run's value by key
    (GB/s or GFLOP/s), and each key's unit."""
    values = [{ceiling_key(c.source, c.kind, c.name): c.value for c in r.ceilings} for r in runs]
    units = {ceiling_key(c.source, c.kind, c.name): c.unit for r in runs for c in r.ceilings}
    keys = list(dict.fromkeys(k for v in values for k in v))
    keys.sort(key=lambda k: (k[0] != "measured", k[1] != "bandwidth", -next(v[k] for v in values if k in v)))
    return keys, values, units


def baseline_value(values: Sequence[Dict[K, float]], key: K, baseline: Baseline) -> Optional[float]:
    """The baseline's value of ``key``: the baseline run's (None where it lacks it), or the median of
    the runs that have it (None where none has)."""
    if baseline == BASELINE_MEDIAN:
        present = [v[key] for v in values if key in v]
        return statistics.median(present) if present else None
    return values[int(baseline)].get(key)


def ratio_text(value: Optional[float], ref: Optional[float]) -> str:
    """``"0.90×"``: ``value / ref`` with two decimals; ``—`` where either is missing or ``ref`` is 0."""
    return f"{value / ref:.2f}×" if value is not None and ref else DASH


def _value_tables(
    c: Comparison,
    keys: Sequence[K],
    first: Sequence[Sequence[str]],
    values: Sequence[Dict[K, float]],
    head: Sequence[str],
) -> Tuple[Table, Table]:
    """The values table (``head`` columns from ``first``, then one column per run) and the ratios
    table (the same with each value / the baseline's, and the median itself when that is the
    baseline)."""
    tags = c.tags
    vals, ratios = [], []
    for key, lead in zip(keys, first):
        ref = baseline_value(values, key, c.baseline)
        vals.append(tuple(lead) + tuple(sig_figs(v[key]) if key in v else DASH for v in values))
        ratios.append(
            tuple(lead)
            + tuple(ratio_text(v.get(key), ref) for v in values)
            + ((sig_figs(ref) if ref is not None else DASH,) if c.baseline == BASELINE_MEDIAN else ())
        )
    align = "l" * len(head)
    median = ("Median",) if c.baseline == BASELINE_MEDIAN else ()
    return (
        Table(tuple(head) + tuple(tags), tuple(vals), align + "r" * len(tags)),
        Table(
            tuple(head) + tuple(tags) + median,
            tuple(ratios),
            align + "r" * (len(tags) + len(median)),
            (f"Each run's value divided by {c.baseline_name}'s.",),
        ),
    )


def _ridges(run: Run) -> Dict[str, float]:
    model = model_of(run)
    if model is None or model.ridge_table().measured_bandwidth is None:
        return {}
    return {r.name: r.measured_ridge for r in model.ridge_table().rows if r.measured_ridge is not None}


def compare_tables(c: Comparison) -> List[Tuple[str, Table]]:
    """The comparison's sections as (title, table): the runs; the ceilings' values and their ratios
    to the baseline; for a native run and a WebGPU run of one GPU, their measured ceilings side by
    side (:func:`~.paths.paths_table`); the measured ridge points (FLOP/byte) and their ratios; and, where any run
    measured power at a ceiling, the per-watt figures and their ratios; then the reference's
    sections (:attr:`Comparison.sections`)."""
    tags, titles = c.tags, c.titles()
    runs_rows = tuple(
        (t, n, lab or DASH, f"{r.tool.name} {r.tool.version}", status_text(r))
        for t, n, lab, r in zip(tags, titles, c.labels, c.runs)
    )
    out = [
        (
            "Runs",
            Table(("Run", "Device", "File", "Tool", "Status"), runs_rows, "lllll", (f"Baseline: {c.baseline_name}.",)),
        )
    ]
    keys, values, units = ceiling_values(c.runs)
    if keys:
        v, r = _value_tables(
            c, keys, [(k[2], k[1], k[0], units[k]) for k in keys], values, ("Ceiling", "Kind", "Source", "Unit")
        )
        out += [("Ceilings", v), ("Ceilings: ratios", r)]
        out += [paths_table(c.runs, tags, i, j) for i, j in path_pairs(c.runs)]
    else:
        out.append(("Ceilings", Table((), (), "", ("No run has ceilings.",))))
    ridges = [_ridges(run) for run in c.runs]
    names_r = list(dict.fromkeys(n for rd in ridges for n in rd))
    if names_r:
        v, r = _value_tables(c, names_r, [(n,) for n in names_r], ridges, ("Compute ceiling",))
        out += [("Ridge points (measured, FLOP/byte)", v), ("Ridge points: ratios", r)]
    effs = [{e.name: e for e in ceiling_efficiency(run.measurements)} for run in c.runs]
    names_e = list(dict.fromkeys(n for e in effs for n in e))
    if names_e:
        per_watt = [{n: e.per_watt for n, e in eff.items()} for eff in effs]
        unit = {n: next(eff[n].unit for eff in effs if n in eff) for n in names_e}
        v, r = _value_tables(c, names_e, [(n, f"{unit[n]} per W") for n in names_e], per_watt, ("Ceiling", "Unit"))
        v = Table(
            v.header,
            v.rows,
            v.align,
            ("Rate per watt: the mean power over the ceiling's timed samples (a run without power there shows —).",),
        )
        out += [("Energy efficiency (measured ceilings with power)", v), ("Energy efficiency: ratios", r)]
    return out + list(c.sections)


def compare_markdown(c: Comparison) -> str:
    """The comparison as Markdown (str ending in a newline): a title naming the runs' devices (and
    the reference), then
    :func:`compare_tables` as sections."""
    devices = list(dict.fromkeys(r.device_name for r in c.runs))
    against = f" against the reference {c.reference}" if c.reference else ""
    lines = [
        f"# Roofline comparison: {len(c.runs)} run{'s' if len(c.runs) != 1 else ''} of {', '.join(devices)}{against}",
        "",
    ]
    for title, table in compare_tables(c):
        lines += [f"## {title}", ""] + table_lines(table, "") + [""]
    return "\n".join(lines)
