"""The tables of a run's report, as data: every view (Markdown, HTML, the CLI) renders the same rows.

Each function returns a :class:`Table` (header, rows of strings, column alignment) or notes, built
from a :class:`~.run.Run` and its model; :mod:`.report` writes them as Markdown, :mod:`.html` as
HTML. Numbers have three significant figures (:func:`apple_roofline.text.sig_figs`); units are GB/s
(1e9 B/s), GFLOP/s (1e9 FLOP/s) and FLOP/byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ...study.markdown import header_warnings
from ...study.records import TIMER_PARAM, Ceiling, Measurement, format_params, working_set_text
from ...study.table import Table
from ...study.timing import TIME_ALIGN, TIME_HEADER, time_notes, time_rows
from ...text import DASH, format_value, percent, sig_figs
from ...timing.stats import CV_WARN
from ..model.limits import CACHE_RESIDENT, CLOCK_MISREAD, DRAM_CLASS, flagged_cell, over_limit_text, share_text
from ..model.model import RooflineModel
from ..model.run import Run

__all__ = [
    "SuiteTable",
    "model_of",
    "missing_ceilings",
    "describe",
    "ceilings_table",
    "ridge_table",
    "suite_tables",
    "skipped_table",
    "not_reachable_table",
    "skipped_sections",
    "suite_time_table",
    "theoretical_table",
    "telemetry_note",
    "efficiency_table",
    "measurement_warnings",
    "report_warnings",
]


@dataclass(frozen=True)
class SuiteTable:
    """The measurements of one suite: ``table`` and the clocks that timed them (``timers``:
    sentences, one per clock, e.g. "Timed by ... (10 of 12 measurements).")."""

    suite: str
    table: Table
    measurements: Tuple[Measurement, ...]
    timers: Tuple[str, ...]


def model_of(run: Run) -> Optional[RooflineModel]:
    """The roofline model of ``run``, or None when it has no bandwidth or no compute ceiling."""
    try:
        model: RooflineModel = RooflineModel.from_run(run)
    except ValueError:
        return None
    return model


def missing_ceilings(run: Run) -> List[str]:
    """The kinds of ceiling ``run`` lacks for a roofline, each as a phrase saying which suite measures
    it: ``["no bandwidth ceiling (measured by the stream and hierarchy suites; no theoretical one is
    known for this device)"]``; empty when it has both kinds."""
    kinds = {c.kind for c in run.ceilings}
    out = []
    if "bandwidth" not in kinds:
        out.append(
            "no bandwidth ceiling (measured by the stream and hierarchy suites; "
            "no theoretical one is known for this device)"
        )
    if "compute" not in kinds:
        out.append(
            "no compute ceiling (measured by the peak and gemm suites; no theoretical one is known for this device)"
        )
    return out


def describe(m: Measurement) -> str:
    """``"suite/kernel/dtype (params)"``: a measurement named in a sentence."""
    p = format_params(m.params)
    return f"{m.label} ({p})" if p else m.label


def ceilings_table(ceilings: Sequence[Ceiling]) -> Table:
    """Every ceiling: measured before theoretical, bandwidth before compute, highest first; each with
    its value, source and where it came from; a cache level's kind gives its working sets."""
    ordered = sorted(ceilings, key=lambda c: (c.source != "measured", c.kind != "bandwidth", -c.value))
    rows = tuple(
        (
            c.name,
            c.kind if c.working_set is None else f"{c.kind}, working sets {working_set_text(c.working_set)}",
            f"{sig_figs(c.value)} {c.unit}",
            c.source,
            c.from_,
        )
        for c in ordered
    )
    return Table(("Ceiling", "Kind", "Value", "Source", "From"), rows, "lllll")


def ridge_table(model: Optional[RooflineModel]) -> Table:
    """The ridge points of :meth:`~.model.RooflineModel.ridge_table`: each compute ceiling,
    measured and theoretical, with its ridge point against the bandwidth of its own source and the
    measured fraction of the theoretical value (never above 100 %: :func:`~.limits.share_text`); the
    bandwidth row's fraction only where both are DRAM's. The notes say which bandwidths. With no model
    (no bandwidth or no compute ceiling) an empty table whose note says so."""
    if model is None:
        return Table((), (), "", ("No ridge points: the run needs a bandwidth and a compute ceiling.",))
    table = model.ridge_table()
    mb, tb = table.measured_bandwidth, table.theoretical_bandwidth
    notes: List[str] = []
    if mb is not None:
        notes.append(
            f"Against the measured bandwidth ceiling {mb.name}, {sig_figs(mb.value)} GB/s"
            + (f" (theoretical {sig_figs(tb.value)} GB/s)." if tb is not None else ".")
        )
    elif tb is not None:
        notes.append(f"No measured bandwidth ceiling; theoretical {tb.name} is {sig_figs(tb.value)} GB/s.")
    if tb is None and any(r.theoretical is not None for r in table.rows):
        notes.append("No theoretical bandwidth, so no theoretical ridge points.")

    def value(c: Optional[Ceiling]) -> str:
        return f"{sig_figs(c.value)} GFLOP/s" if c is not None else DASH

    def ridge(r: Optional[float]) -> str:
        return sig_figs(r) if r is not None else DASH

    rows: List[Tuple[str, ...]] = []
    for row in table.rows:
        fraction = row.fraction_of_theoretical
        rows.append(
            (
                row.name,
                value(row.measured),
                ridge(row.measured_ridge),
                value(row.theoretical),
                ridge(row.theoretical_ridge),
                share_text(fraction, CLOCK_MISREAD) if fraction is not None else DASH,
            )
        )
    if mb is not None and tb is not None:
        # a cache's bandwidth (STREAM's small arrays) is no share of the DRAM interface's peak
        same = mb.name == tb.name == DRAM_CLASS
        rows.append(
            (
                f"{mb.name} (bandwidth)",
                f"{sig_figs(mb.value)} GB/s",
                DASH,
                f"{sig_figs(tb.value)} GB/s",
                DASH,
                share_text(mb.value / tb.value, CACHE_RESIDENT) if same else DASH,
            )
        )
    header = (
        "Ceiling",
        "Measured",
        "Ridge, measured (FLOP/B)",
        "Theoretical",
        "Ridge, theoretical (FLOP/B)",
        "Measured / theoretical",
    )
    keep = [i for i in range(len(header)) if not (i == 4 and tb is None)]  # no theoretical bandwidth: no column
    return Table(
        tuple(header[i] for i in keep),
        tuple(tuple(r[i] for i in keep) for r in rows),
        "".join("lrrrrr"[i] for i in keep),
        tuple(notes),
    )


def suite_tables(measurements: Sequence[Measurement]) -> List[SuiteTable]:
    """One table per suite, in order of first appearance: kernel, dtype, parameters, FLOP/B, median
    GFLOP/s and GB/s (the one above its physical limit marked with the reason:
    :func:`~.limits.flagged_cell`), CV (with "(noisy)" above :data:`~apple_roofline.timing.stats.NOISY_CV`,
    docs/design/measurement.md, "Noisy samples") and whether it is valid (``"**NO**"`` when not)."""
    suites: Dict[str, List[Measurement]] = {}
    for m in measurements:
        suites.setdefault(m.suite, []).append(m)
    out: List[SuiteTable] = []
    for suite, ms in suites.items():
        rows = tuple(
            (
                m.kernel,
                m.dtype,
                format_params(m.params) or DASH,
                sig_figs(m.intensity),
                flagged_cell(m, sig_figs(m.gflops), "GFLOP/s"),
                flagged_cell(m, sig_figs(m.gbps), "GB/s"),
                percent(m.cv) + (" (noisy)" if m.valid and m.noisy else ""),
                "yes" if m.valid else "**NO**",
            )
            for m in ms
        )
        timers: Dict[str, int] = {}
        for m in ms:
            t = m.params.get(TIMER_PARAM)
            if t:
                timers[str(t)] = timers.get(str(t), 0) + 1
        out.append(
            SuiteTable(
                suite,
                Table(("Kernel", "dtype", "Params", "FLOP/B", "GFLOP/s", "GB/s", "CV", "Valid"), rows, "lllrrrrl"),
                tuple(ms),
                tuple(f"Timed by {t} ({n} of {len(ms)} measurements)." for t, n in timers.items()),
            )
        )
    return out


def suite_time_table(run: Run) -> Optional[Table]:
    """Each suite's wall time against its budget (:class:`~apple_roofline.study.timing.SuiteTime`,
    docs/design/budgets.md, "Time budgets"), with a total, and the time outside the suites (start-up, between
    suites, end: :class:`~apple_roofline.study.timing.PhaseTime`) with the wall total where recorded
    (:func:`~apple_roofline.study.timing.time_rows`); None for a run that predates them."""
    if not run.suite_times:
        return None
    return Table(
        TIME_HEADER,
        tuple(time_rows(run.suite_times, run.phase_times)),
        TIME_ALIGN,
        time_notes(run.suite_times, run.phase_times),
    )


def skipped_table(run: Run) -> Table:
    """The kernels the device could not run, with the reason."""
    return Table(("Kernel", "Reason"), tuple((s.label, s.reason) for s in run.skipped), "ll")


#: The name a backend's interface goes by in the report's "Not reachable" heading.
_INTERFACE_NAMES = {"wgpu": "WebGPU"}


def not_reachable_table(run: Run) -> Optional[Table]:
    """What the run's backend cannot reach at all, with the reason: ``device["not_reachable"]`` (a
    WebGPU run's FP64, matrix units, vendor GEMM and in-kernel clock, docs/design/backends.md, "The
    WebGPU backend"); None where the device records nothing of the kind."""
    found = run.device.get("not_reachable")
    if not isinstance(found, Mapping) or not found:
        return None
    return Table(("Not reachable", "Reason"), tuple((str(k), str(v)) for k, v in found.items()), "ll")


def skipped_sections(run: Run) -> List[Tuple[str, Table]]:
    """The report's closing lists as (heading, table): "Skipped" (:func:`skipped_table`), then, where
    the device records it, "Not reachable through <interface>" (:func:`not_reachable_table`)."""
    out = [("Skipped", skipped_table(run))]
    unreachable = not_reachable_table(run)
    if unreachable is not None:
        backend = str(run.device.get("backend", ""))
        out.append((f"Not reachable through {_INTERFACE_NAMES.get(backend, backend)}", unreachable))
    return out


def theoretical_table(device: Mapping[str, object]) -> Optional[Table]:
    """Where the theoretical peaks came from (``device["theoretical"]``): each figure with its value
    and source; the notes hold each peak's derivation and the caveats. None when the run has none."""
    spec = device.get("theoretical")
    if not isinstance(spec, Mapping):
        return None
    rows: List[Tuple[str, ...]] = []
    for key, value in spec.items():
        if key.endswith(("_source", "_note")) or isinstance(value, (Mapping, list, tuple)):
            continue
        source = spec.get(f"{key}_source") or spec.get(f"{key.rsplit('_', 1)[0]}_source", "")
        rows.append((key, format_value(key, value), str(source or DASH)))
    notes: List[str] = []
    peaks = spec.get("theoretical")
    if isinstance(peaks, Mapping):
        notes += [f"**{dt}**: {p.get('derivation', DASH)}" for dt, p in peaks.items() if isinstance(p, Mapping)]
    if spec.get("theoretical_bandwidth_note"):
        notes.append(str(spec["theoretical_bandwidth_note"]))
    extra = spec.get("notes")
    if isinstance(extra, (list, tuple)):
        notes += [str(n) for n in extra]
    return Table(("Figure", "Value", "Source"), tuple(rows), "lll", tuple(notes))


#: The efficiency table's optional columns: (parameter, header), shown when any measurement has it.
_TELEMETRY_COLUMNS: Tuple[Tuple[str, str], ...] = (
    ("power_max_w", "Max W"),
    ("sm_clock_mhz", "SM MHz"),
    ("mem_clock_mhz", "Memory MHz"),
    ("cpu_clock_mhz", "CPU MHz"),
    ("cpu_cluster_clocks", "CPU clusters"),
    ("temperature_c", "°C"),
    ("throttle", "Throttle"),
)


def telemetry_note(device: Mapping[str, object]) -> Optional[str]:
    """One sentence on what sampled clocks and power (``device["telemetry"]``, docs/design/power.md,
    "Clocks and power"): the sampler and its period, or why none read, and what it could not read;
    None for runs that predate sampling."""
    t = device.get("telemetry")
    if not isinstance(t, Mapping):
        return None
    name = t.get("sampler", "none")
    if t.get("reason"):
        text = f"Clocks and power were not sampled ({name}): {t['reason']}."
    else:
        period = t.get("period_s")
        every = f" every {1000 * period:.3g} ms" if isinstance(period, (int, float)) else ""
        text = f"Clocks and power sampled by {name}{every} ({t.get('samples', 0)} samples)."
    source = t.get("power_source")
    if source and not t.get("reason"):
        text += f" Power from {source}."
    average = t.get("power_average_s")
    if isinstance(average, (int, float)) and average > 0 and not t.get("reason"):
        text += (
            f" A power reading is the average of the last {average:g} s, so only measurements whose timed "
            f"samples last at least that long have power and per-watt figures."
        )
    window = t.get("power_window_s")
    if isinstance(window, (int, float)) and window > 0 and not t.get("reason"):
        text += f" Timed samples were lengthened to at least {window:g} s per measurement (--power-window)."
    notes = t.get("notes")
    if isinstance(notes, (list, tuple)) and notes:
        text += " Not read: " + "; ".join(str(n) for n in notes) + "."
    return text


def efficiency_table(measurements: Sequence[Measurement]) -> Optional[Table]:
    """Energy efficiency of every measurement that has power (docs/design/power.md, "Clocks and power"):
    kernel, parameters, GFLOP/s, GB/s, mean power (W), GFLOP/s per W, GB/s per W, then the maximum
    power, clocks (MHz), temperature (°C) and throttle reasons where any measurement has them.
    None when no measurement has power."""
    ms = [m for m in measurements if m.power_w is not None]
    if not ms:
        return None
    extra = [(k, h) for k, h in _TELEMETRY_COLUMNS if any(k in m.params for m in ms)]

    def cell(v: object) -> str:
        if isinstance(v, bool) or v is None:
            return DASH
        return sig_figs(float(v)) if isinstance(v, (int, float)) else str(v)

    rows = tuple(
        (
            m.label,
            format_params(m.params) or DASH,
            sig_figs(m.gflops),
            sig_figs(m.gbps),
            cell(m.power_w),
            cell(m.gflops_per_watt),
            cell(m.gbps_per_watt),
        )
        + tuple(cell(m.params.get(k)) for k, _h in extra)
        for m in ms
    )
    header = ("Kernel", "Params", "GFLOP/s", "GB/s", "W", "GFLOP/s per W", "GB/s per W") + tuple(h for _k, h in extra)
    align = "llrrrrr" + "".join("l" if k == "throttle" else "r" for k, _h in extra)
    return Table(header, rows, align, ("Mean over each measurement's timed samples; W is the mean power.",))


def _measurement_warnings(run: Run) -> List[Tuple[Measurement, str, str]]:
    """(measurement, "invalid" | "over limit" | "noisy", text) for :func:`measurement_warnings`."""
    out: List[Tuple[Measurement, str, str]] = []
    for m in run.measurements:
        if not m.valid:
            found = f": {m.validation}" if m.validation else ""
            out.append((m, "invalid", f"{describe(m)} failed validation{found}; never used as a ceiling"))
        if m.over_limit is not None:
            out.append((m, "over limit", over_limit_text(m)))
        if m.cv > CV_WARN:
            out.append((m, "noisy", f"{describe(m)} is noisy: CV {percent(m.cv)} > {100 * CV_WARN:g} %"))
    return out


def measurement_warnings(run: Run) -> List[str]:
    """Warnings derived from the measurements: every invalid measurement, every one above its
    physical limit (docs/design/limits.md, "Physical limits") and every one whose CV exceeds
    :data:`apple_roofline.timing.stats.CV_WARN` (5 %)."""
    return [text for _m, _kind, text in _measurement_warnings(run)]


_KEY_VALUE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)=([^\s,;:()]+)")


def _same_param(text: str, value: object) -> bool:
    if text == str(value):
        return True
    try:
        return float(text) == float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _mentions(warning: str, m: Measurement, kind: str) -> bool:
    """Whether ``warning`` (free text, e.g. the runner's "stream/add/fp32 n=1024: CV 7.2% > 5%
    (noisy samples)") already reports ``kind`` ("noisy" or "invalid") of ``m``: it names
    ``m.label``, every ``key=value`` in it that is a parameter of ``m`` agrees with ``m``, and it
    speaks of the CV (noisy), of validation (invalid) or of its limit (over limit)."""
    at = warning.find(m.label)
    if at < 0:
        return False
    end = at + len(m.label)
    if end < len(warning) and (warning[end].isalnum() or warning[end] in "_/"):
        return False  # a longer label: ".../fp32x"
    low = warning.lower()
    if kind == "noisy" and "cv" not in low and "noisy" not in low:
        return False
    if kind == "invalid" and "valid" not in low:
        return False
    if kind == "over limit" and "above the" not in low:
        return False
    return all(_same_param(v, m.params[k]) for k, v in _KEY_VALUE.findall(warning[end:]) if k in m.params)


def report_warnings(run: Run) -> List[str]:
    """Every warning once: an interrupted run first, then ``run.warnings`` (exact repeats dropped),
    then the measurement-derived ones that no warning of the run already reports."""
    out = header_warnings(run, "run")
    for m, kind, text in _measurement_warnings(run):
        if text not in out and not any(_mentions(w, m, kind) for w in run.warnings):
            out.append(text)
    return out
