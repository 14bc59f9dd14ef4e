"""Text reports of a dispatch-latency study: a distribution table, the binding's cost, Markdown, CSV, JSON.

Every figure here is per launch. Tables give microseconds (µs, 1e-6 s) to 3 significant figures
(:func:`apple_roofline.text.sig_figs`); the CSV gives seconds at full precision. Distributions are
the order statistics of :attr:`~.model.LatencySeries.distribution` (:func:`apple_roofline.timing.stats.summarize`:
p10, p50, p90, p99, max); a throughput sample is the mean of ``launches_per_sample`` back-to-back
launches, every other sample is one launch.

The binding's cost (:func:`binding_cost`) is what calling the public Python API once per launch
adds to the C++ loop's floor: the median of the paired ``python − native`` differences of the two
paths measured interleaved on the host clock, with its confidence interval and whether that
interval resolves it (:mod:`.paired`). A study whose paths were not interleaved (a file written
before they were) has no paired difference, and its cost is reported as not resolved: a difference
of two medians taken apart carries the host's drift. Each path's own median is given beside it,
and the peer libraries (``cupy``, ``torch``, ``mlx``, ``pyobjc``) measured in the same study. Series
that failed validation are in the table, marked, and are never used for a binding cost or a step
breakdown.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from ..study.markdown import end_report, format_report, header_warnings, provenance_lines, skipped_lines, title_lines
from ..text import DASH, key_value_pairs, markdown_table, sig_figs
from .kernels import KERNELS
from .model import PAIRED_MEASURES, DispatchStudy, LatencySeries
from .paired import PairedDifference

__all__ = [
    "BINDING_MEASURES",
    "FORMATS",
    "LATENCY_COLUMNS",
    "LATENCY_CSV_COLUMNS",
    "BindingCost",
    "binding_cost",
    "cost_text",
    "format_dispatch",
    "latency_table",
    "step_medians",
    "steps_path",
]

#: Formats of :func:`format_dispatch`.
FORMATS: tuple[str, ...] = ("md", "csv", "json")
#: Header of :func:`latency_table` (the numeric columns in µs per launch).
LATENCY_COLUMNS: tuple[str, ...] = (
    "kernel",
    "measure",
    "path",
    "clock",
    "n",
    "p10 (µs)",
    "p50 (µs)",
    "p90 (µs)",
    "p99 (µs)",
    "max (µs)",
    "valid",
)
#: Header of the CSV form of :func:`format_dispatch` (the numeric columns in seconds per launch).
LATENCY_CSV_COLUMNS: tuple[str, ...] = (
    "kernel",
    "measure",
    "path",
    "clock",
    "n",
    "p10_s",
    "p50_s",
    "p90_s",
    "p99_s",
    "max_s",
    "valid",
)
#: The measures :func:`binding_cost` compares (those measured interleaved).
BINDING_MEASURES: tuple[str, ...] = PAIRED_MEASURES
#: Why a study without a pairing gives no binding cost.
NOT_PAIRED = (
    "not resolved: the paths were not measured interleaved, and a difference of two medians "
    "taken apart carries the host's drift"
)

_NATIVE = "native"
_PYTHON = "python"


def _us(seconds: float) -> str:
    """Seconds as microseconds, 3 significant figures (``1.234e-6 -> "1.23"``)."""
    return sig_figs(seconds * 1e6)


def _measure(s: LatencySeries) -> str:
    """``s.measure``, or ``"step: <name>"`` for a step."""
    return f"step: {s.step}" if s.measure == "step" else s.measure


def _valid_text(s: LatencySeries) -> str:
    """``"yes"``, or ``"NO: <validation>"`` (``"NO"`` alone when no reason was recorded)."""
    if s.valid:
        return "yes"
    return f"NO: {s.validation}" if s.validation else "NO"


def latency_table(study: DispatchStudy) -> tuple[list[str], list[list[str]]]:
    """The distribution of every series, one row each, in ``study.series`` order.

    Returns:
        ``(header, rows)``: ``header`` is :data:`LATENCY_COLUMNS`; each row holds kernel, measure
        (``"step: <name>"`` for a step), path, clock, the sample count ``n``, then p10, p50, p90,
        p99 and max in µs per launch to 3 significant figures, then ``"yes"`` or
        ``"NO: <validation>"``. Invalid series are included (and marked). Never raises for a
        well-formed study.
    """
    rows: list[list[str]] = []
    for s in study.series:
        d = s.distribution
        rows.append(
            [
                s.kernel,
                _measure(s),
                s.path,
                s.clock,
                str(d.n),
                _us(d.p10),
                _us(d.p50),
                _us(d.p90),
                _us(d.p99),
                _us(d.max),
                _valid_text(s),
            ]
        )
    return list(LATENCY_COLUMNS), rows


@dataclass(frozen=True)
class BindingCost:
    """What the Python binding adds to one launch, for one kernel and measure.

    Attributes:
        kernel: ``"null"`` or ``"tiny"``.
        measure: ``"throughput"`` or ``"round_trip"``.
        python_p50_s: median of the valid ``python`` host-clock series, seconds per launch.
        native_p50_s: median of the valid ``native`` host-clock series, seconds per launch.
        paired: the median of the paired ``python − native`` differences with its confidence
            interval (:class:`~.paired.PairedDifference`, seconds per launch), or None when the two
            paths were not measured interleaved.
        peers: peer path name -> median of its valid host-clock series, seconds per launch, in
            ``study.series`` order; stored as a plain ``dict`` copy and excluded from hashing.
    """

    kernel: str
    measure: str
    python_p50_s: float
    native_p50_s: float
    paired: PairedDifference | None
    peers: dict[str, float] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "peers", dict(self.peers))

    @property
    def resolved(self) -> bool:
        """Whether the cost is a finding: paired, and its interval resolves it
        (:attr:`~.paired.PairedDifference.resolved`)."""
        return self.paired is not None and self.paired.resolved

    @property
    def verdict(self) -> str:
        """``"resolved"`` or ``"not resolved: <reason>"`` (:attr:`~.paired.PairedDifference.verdict`;
        :data:`NOT_PAIRED` without a pairing)."""
        return self.paired.verdict if self.paired is not None else NOT_PAIRED


def _first_valid(study: DispatchStudy, kernel: str, measure: str, path: str, clock: str) -> LatencySeries | None:
    """The first valid series with these keys (no step), or None."""
    for s in study.series:
        if s.valid and not s.step and (s.kernel, s.measure, s.path, s.clock) == (kernel, measure, path, clock):
            return s
    return None


def _kernels(study: DispatchStudy) -> list[str]:
    """The study's kernels: those of :data:`KERNELS` first, in that order, then any other."""
    seen = {s.kernel for s in study.series}
    return [k for k in KERNELS if k in seen] + sorted(seen.difference(KERNELS))


def binding_cost(study: DispatchStudy) -> list[BindingCost]:
    """The Python binding's cost per launch, for throughput and round trip, kernel by kernel.

    For each measure of :data:`BINDING_MEASURES` and each kernel (in :data:`KERNELS` order) that
    has both a valid ``native`` and a valid ``python`` series on the host clock, their medians, the
    paired difference when the study measured them interleaved
    (:meth:`~.model.DispatchStudy.paired`), and the medians of the valid host-clock series of every
    other path (the peers) for the same kernel and measure. Where a key holds more than one valid
    series, the first in ``study.series`` counts. Device-clock series are never used: the binding's
    cost is paid on the host.

    Returns:
        One :class:`BindingCost` per (measure, kernel) pair that has both paths; an empty list
        when none has. Never raises for a well-formed study.
    """
    out: list[BindingCost] = []
    for measure in BINDING_MEASURES:
        for kernel in _kernels(study):
            native = _first_valid(study, kernel, measure, _NATIVE, "host")
            python = _first_valid(study, kernel, measure, _PYTHON, "host")
            if native is None or python is None:
                continue
            peers: dict[str, float] = {}
            for s in study.series:
                if (
                    s.valid
                    and not s.step
                    and s.kernel == kernel
                    and s.measure == measure
                    and s.clock == "host"
                    and s.path not in (_NATIVE, _PYTHON)
                    and s.path not in peers
                ):
                    peers[s.path] = s.distribution.p50
            out.append(
                BindingCost(
                    kernel,
                    measure,
                    python.distribution.p50,
                    native.distribution.p50,
                    study.paired(kernel, measure),
                    peers,
                )
            )
    return out


def _signed_us(seconds: float) -> str:
    """Seconds as signed microseconds, 3 significant figures (``2.1e-7 -> "+0.210"``)."""
    text = _us(seconds)
    return text if text.startswith("-") or seconds == 0 else "+" + text


def cost_text(cost: BindingCost) -> str:
    """One line on ``cost``: ``"python − native = +0.210 µs per launch (median of 200 paired
    differences, 95 % interval +0.180 to +0.240 µs): resolved"``, or with ``"not resolved: ..."``
    (:attr:`BindingCost.verdict`); without a pairing, the verdict alone."""
    p = cost.paired
    if p is None:
        return f"python − native: {cost.verdict}"
    return (
        f"python − native = {_signed_us(p.median_s)} µs per launch (median of {p.n:,} paired "
        f"difference{'s' if p.n != 1 else ''}, {p.confidence * 100:g} % interval {_signed_us(p.low_s)} to "
        f"{_signed_us(p.high_s)} µs): {cost.verdict}"
    )


def steps_path(study: DispatchStudy) -> str:
    """The path whose round-trip steps the study reports: ``"native"`` where it has a valid native
    step series (``Kernel.timeline``), else ``"python"`` where it has a valid python one (the WebGPU
    backend's host steps, timed from Python), else ``""``."""
    paths = {s.path for s in study.series if s.valid and s.measure == "step"}
    return next((p for p in (_NATIVE, _PYTHON) if p in paths), "")


def step_medians(study: DispatchStudy) -> list[tuple[str, list[tuple[LatencySeries, float]]]]:
    """The round-trip steps of each kernel with their medians, on the path :func:`steps_path` names.

    Only valid series of that path and of measure ``step`` count; steps are ordered as they first
    appear in ``study.series`` (over all kernels), and where one kernel has a step twice (two
    clocks) the first series counts.

    Returns:
        ``[(kernel, [(series, median seconds per launch), ...]), ...]`` for each kernel (in
        :data:`KERNELS` order) with at least one such step; medians may be negative (a GPU can
        start the work before the host's launch call returns).
    """
    path = steps_path(study)
    steps = [s for s in study.series if s.valid and s.measure == "step" and s.path == path]
    order: dict[str, int] = {}
    for s in steps:
        order.setdefault(s.step, len(order))
    out: list[tuple[str, list[tuple[LatencySeries, float]]]] = []
    for kernel in _kernels(study):
        mine: dict[str, LatencySeries] = {}
        for s in steps:
            if s.kernel == kernel:
                mine.setdefault(s.step, s)
        if mine:
            ordered = sorted(mine.values(), key=lambda s: order[s.step])
            out.append((kernel, [(s, s.distribution.p50) for s in ordered]))
    return out


def _launches_note(study: DispatchStudy) -> str:
    """How throughput samples were averaged, from their ``launches_per_sample``."""
    counts = sorted({s.launches_per_sample for s in study.series if s.measure == "throughput"})
    if not counts:
        return "no throughput series in this study"
    if len(counts) == 1:
        n = counts[0]
        return f"{n:,} launch{'es' if n != 1 else ''} here"
    return f"{counts[0]:,} to {counts[-1]:,} launches here, as each series records"


def _warnings(study: DispatchStudy) -> list[str]:
    """An interrupted study first, then ``study.warnings`` (repeats dropped), then each invalid series."""
    out = header_warnings(study, "study")
    for s in study.series:
        if not s.valid:
            why = f": {s.validation}" if s.validation else ""
            out.append(f"{s.label} failed validation{why}; left out of the binding cost, steps and plots")
    return out


def _binding_lines(study: DispatchStudy) -> list[str]:
    costs = binding_cost(study)
    if not costs:
        return ["Not available: no kernel has both a valid native and a valid python series on the host clock."]
    lines = [
        (
            "What calling the public Python API once per launch adds to the C++ loop, on the host clock: "
            "the two loops were measured interleaved, one sample of each back to back per pair, the first "
            "alternating, and the cost is the median of the paired differences with its distribution-free "
            "confidence interval (order statistics, binomial). It is resolved only when the interval lies "
            "above zero and is no wider than the effect; a negative or unresolved cost is not a finding. "
            "Each loop's own median follows."
        ),
        "",
    ]
    for c in costs:
        text = (
            f"- **{c.kernel} {c.measure}**: {cost_text(c)} "
            f"(python p50 {_us(c.python_p50_s)} µs, native p50 {_us(c.native_p50_s)} µs)"
        )
        if c.peers:
            text += "; " + ", ".join(f"{p} p50 {_us(v)} µs" for p, v in c.peers.items())
        lines.append(text)
    return lines


def _steps_lines(study: DispatchStudy) -> list[str]:
    per_kernel = step_medians(study)
    if not per_kernel:
        return ["Not measured: the study has no valid step series."]
    rows: list[list[object]] = []
    for kernel, steps in per_kernel:
        for s, p50 in steps:
            rows.append([kernel, s.step, s.clock, _us(p50)])
        rows.append([kernel, "sum of medians", DASH, _us(sum(p for _s, p in steps))])
    lines = [
        (
            f"Medians of the {steps_path(study)} path's steps, in round-trip order, µs per launch. A negative "
            "median means the device started the work before the host's launch call returned."
        ),
        "",
    ]
    return lines + markdown_table(["Kernel", "Step", "Clock", "Median (µs)"], rows, "lllr")


def _markdown(study: DispatchStudy) -> str:
    lines = title_lines("Dispatch latency", study) + provenance_lines(study)
    lines += ["", "## Parameters", "", key_value_pairs(study.params)]
    lines += ["", "## Distributions", ""]
    lines += [
        (
            "Distributions are per launch, in µs (1e-6 s): order statistics of the samples (linear "
            "interpolation). Round-trip, start-latency and step samples are one launch each; each "
            "throughput sample is the mean of launches_per_sample back-to-back launches "
            f"({_launches_note(study)}), so its spread is that of means, not of single launches."
        ),
        "",
    ]
    header, rows = latency_table(study)
    if rows:
        lines += markdown_table(header, rows, "llllrrrrrrl")
    else:
        lines += ["No series."]
    lines += ["", "## Binding cost", ""] + _binding_lines(study)
    lines += ["", "## Round-trip steps", ""] + _steps_lines(study)
    lines += [""] + skipped_lines(["Path", "Reason"], [[s.path, s.reason] for s in study.skipped])
    return end_report(lines, _warnings(study))


def _csv(study: DispatchStudy) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LATENCY_CSV_COLUMNS)
    for s in study.series:
        d = s.distribution
        w.writerow(
            [
                s.kernel,
                _measure(s),
                s.path,
                s.clock,
                d.n,
                repr(d.p10),
                repr(d.p50),
                repr(d.p90),
                repr(d.p99),
                repr(d.max),
                _valid_text(s),
            ]
        )
    return buf.getvalue()


def format_dispatch(study: DispatchStudy, fmt: str = "md") -> str:
    """The study as text (str ending in a newline).

    Formats:
        ``"md"``: Markdown: a heading with the device name, backend and date; provenance; the
            study's parameters; the distribution table (:func:`latency_table`, µs per launch) with a
            line on units and on how throughput samples are averaged; the binding's cost
            (:func:`binding_cost`); the round-trip step medians (:func:`step_medians`); skipped paths with reasons;
            warnings (the study's own, then every invalid series).
        ``"csv"``: header :data:`LATENCY_CSV_COLUMNS`, then one row per series, as
            :func:`latency_table` but with seconds per launch at full precision (``repr``) in the
            numeric columns.
        ``"json"``: :meth:`DispatchStudy.to_json`.

    Raises:
        OptionError: (a ValueError) ``fmt`` is not one of :data:`FORMATS` (the message lists them).
        apple_roofline.study.files.ResultsError: ``"json"`` of a study holding a non-finite number.
    """
    return format_report(study, fmt, FORMATS, _markdown, _csv)
