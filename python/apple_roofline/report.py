"""Text reports of a run: Markdown, CSV and a two-run comparison.

The Markdown report states the provenance and counting conventions of the
run, its ceilings (measured and theoretical), the ridge point of every compute
ceiling (Williams, Waterman, Patterson 2009 roofline; ridge point = compute
ceiling / bandwidth as in the M5 GPU roofline analysis), one table per suite,
skipped kernels and warnings (noisy measurements with CV > 5 %, DESIGN section
5, and invalid ones). Numbers have 3 significant figures; units are GB/s
(1e9 B/s), GFLOP/s (1e9 FLOP/s) and FLOP/byte.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import datetime
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .results import TIMER_PARAM, Ceiling, Measurement, Run, _fmt3, format_params
from .roofline import Roofline
from .stats import CV_WARN

__all__ = ["to_markdown", "to_csv", "compare_markdown", "measurement_warnings", "run_date", "CSV_COLUMNS"]

#: Columns of :func:`to_csv`, in order.
CSV_COLUMNS: Tuple[str, ...] = (
    "suite", "kernel", "dtype", "params", "flops", "bytes", "intensity",
    "median_s", "min_s", "max_s", "cv", "gflops", "gbps", "valid",
)

_DASH = "—"


def run_date(created: str) -> str:
    """The date (``YYYY-MM-DD``) of an ISO 8601 timestamp; the string itself,
    stripped, when it does not parse."""
    text = created.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return text


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], align: Optional[str] = None) -> List[str]:
    """Markdown table lines; ``align`` is one char per column ('l' or 'r')."""
    spec = align or "l" * len(header)
    seps = ["---:" if a == "r" else "---" for a in spec]
    out = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(seps) + " |"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _pct(x: float) -> str:
    return f"{_fmt3(100.0 * x)} %"


def _describe(m: Measurement) -> str:
    p = format_params(m.params)
    return f"{m.label} ({p})" if p else m.label


def _hz(hz: float) -> str:
    """A frequency: ``"3.44 GHz"``, ``"800 MHz"``, ``"32.8 kHz"``."""
    for scale, unit in ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")):
        if abs(hz) >= scale:
            return f"{hz / scale:.2f} {unit}" if unit == "GHz" else f"{_fmt3(hz / scale)} {unit}"
    return f"{_fmt3(hz)} Hz"


def _value(key: str, value: object) -> str:
    """A figure for a report: ``None`` as a dash, booleans as yes/no, ``*_hz``
    in GHz/MHz, integral floats as integers (``2.0`` -> ``2``), other floats
    to 3 significant figures."""
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        x = float(value)
        if key.endswith("_hz") and math.isfinite(x):
            return _hz(x)
        if isinstance(value, float):
            if math.isfinite(x) and x.is_integer() and abs(x) < 1e15:
                return str(int(x))
            return _fmt3(x)
        return str(value)
    return str(value)


def _kv(d: Mapping[str, object]) -> str:
    """``k=v`` pairs of the scalar entries (nested objects get their own section)."""
    return ", ".join(
        f"{k}={_value(k, v)}" for k, v in d.items() if not isinstance(v, (Mapping, list, tuple))
    ) or _DASH


def _theoretical_section(device: Mapping[str, object]) -> List[str]:
    """Where the theoretical peaks came from: each figure with its source, and each derivation."""
    spec = device.get("theoretical")
    if not isinstance(spec, Mapping):
        return []
    rows: List[List[object]] = []
    for key, value in spec.items():
        if key.endswith(("_source", "_note")) or isinstance(value, (Mapping, list, tuple)):
            continue
        source = spec.get(f"{key}_source") or spec.get(f"{key.rsplit('_', 1)[0]}_source", "")
        rows.append([key, _value(key, value), source or _DASH])
    out = ["", "## Theoretical peaks", ""] + _table(["Figure", "Value", "Source"], rows, "lll")
    peaks = spec.get("theoretical")
    if isinstance(peaks, Mapping):
        out += [""] + [f"- **{dt}**: {p.get('derivation', _DASH)}" for dt, p in peaks.items() if isinstance(p, Mapping)]
    for key in ("theoretical_bandwidth_note",):
        if spec.get(key):
            out += [f"- {spec[key]}"]
    notes = spec.get("notes")
    if isinstance(notes, (list, tuple)):
        out += [f"- {n}" for n in notes]
    return out


def _roofline(run: Run) -> Optional[Roofline]:
    try:
        return Roofline.from_run(run)
    except ValueError:
        return None


def _measurement_warnings(run: Run) -> List[Tuple[Measurement, str, str]]:
    """(measurement, "invalid" | "noisy", text) for :func:`measurement_warnings`."""
    out: List[Tuple[Measurement, str, str]] = []
    for m in run.measurements:
        if not m.valid:
            found = f": {m.validation}" if m.validation else ""
            out.append((m, "invalid", f"{_describe(m)} failed validation{found}; never used as a ceiling"))
        if m.cv > CV_WARN:
            out.append((m, "noisy", f"{_describe(m)} is noisy: CV {_pct(m.cv)} > {100 * CV_WARN:g} %"))
    return out


def measurement_warnings(run: Run) -> List[str]:
    """Warnings derived from the measurements: every invalid measurement and
    every one whose CV exceeds :data:`stats.CV_WARN` (5 %)."""
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
    """Whether ``warning`` (free text, e.g. the runner's "stream/add/fp32
    n=1024: CV 7.2% > 5% (noisy samples)") already reports ``kind``
    ("noisy" or "invalid") of ``m``: it names ``m.label``, every ``key=value``
    in it that is a parameter of ``m`` agrees with ``m``, and it speaks of the
    CV (noisy) or of validation (invalid)."""
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
    return all(_same_param(v, m.params[k]) for k, v in _KEY_VALUE.findall(warning[end:]) if k in m.params)


def _warnings(run: Run) -> List[str]:
    """Every warning once: an interrupted run first, then ``run.warnings``
    (exact repeats dropped), then the measurement-derived ones that no
    warning of the run already reports."""
    out: List[str] = []
    if not run.complete and not any("interrupt" in w.lower() for w in run.warnings):
        out.append("run was interrupted: partial results")
    for w in run.warnings:
        if w not in out:
            out.append(w)
    for m, kind, text in _measurement_warnings(run):
        if text not in out and not any(_mentions(w, m, kind) for w in run.warnings):
            out.append(text)
    return out


def to_markdown(run: Run) -> str:
    """The run as a Markdown report (str ending in a newline).

    Sections: title (device name, backend, date), provenance, conventions,
    ceilings, ridge points, one table per suite (kernel, dtype, parameters,
    FLOP/B, median GFLOP/s, GB/s, CV, valid), skipped kernels, warnings. An
    interrupted run (``complete`` false) says "INTERRUPTED — partial results"
    under the title. Never raises for a well-formed :class:`Run`; sections
    with nothing to show say so.
    """
    lines: List[str] = [f"# Roofline: {run.device_name} ({run.backend}) — {run_date(run.created)}", ""]
    if not run.complete:
        lines += ["**INTERRUPTED — partial results.**", ""]

    tool = f"{run.tool.name} {run.tool.version}"
    if run.tool.git_revision:
        tool += f" (git {run.tool.git_revision})"
    status = "complete" if run.complete else "INTERRUPTED — partial results"
    lines += ["## Provenance", ""]
    lines += _table(
        ["Field", "Value"],
        [
            ["Tool", tool],
            ["Git revision", run.tool.git_revision or "unknown"],
            ["Created", run.created],
            ["Finished", run.finished or _DASH],
            ["Host", _kv(run.host)],
            ["Device", _kv(run.device)],
            ["Command", f"`{' '.join(run.command)}`" if run.command else _DASH],
            ["Status", status],
            ["Schema version", run.schema_version],
        ],
    )
    lines += _theoretical_section(run.device)
    lines += ["", "## Conventions", ""]
    lines += [f"- **{k}**: {v}" for k, v in run.conventions.items()] or ["- none recorded"]

    lines += ["", "## Ceilings", ""]
    ordered = sorted(
        run.ceilings, key=lambda c: (c.source != "measured", c.kind != "bandwidth", -c.value)
    )
    if ordered:
        lines += _table(
            ["Ceiling", "Kind", "Value", "Source", "From"],
            [[c.name, c.kind, f"{_fmt3(c.value)} {c.unit}", c.source, c.from_] for c in ordered],
            "lllll",
        )
    else:
        lines += ["No ceilings."]

    lines += ["", "## Ridge points", ""]
    lines += _ridge_section(run)

    suites: Dict[str, List[Measurement]] = {}
    for m in run.measurements:
        suites.setdefault(m.suite, []).append(m)
    for suite, ms in suites.items():
        lines += ["", f"## Suite: {suite}", ""]
        lines += _table(
            ["Kernel", "dtype", "Params", "FLOP/B", "GFLOP/s", "GB/s", "CV", "Valid"],
            [
                [
                    m.kernel, m.dtype, format_params(m.params) or _DASH, _fmt3(m.intensity), _fmt3(m.gflops),
                    _fmt3(m.gbps), _pct(m.cv), "yes" if m.valid else "**NO**",
                ]
                for m in ms
            ],
            "lllrrrrl",
        )
        timers: Dict[str, int] = {}
        for m in ms:
            t = m.params.get(TIMER_PARAM)
            if t:
                timers[str(t)] = timers.get(str(t), 0) + 1
        for t, count in timers.items():
            lines += ["", f"Timed by {t} ({count} of {len(ms)} measurements)."]
    if not suites:
        lines += ["", "No measurements."]

    lines += ["", "## Skipped", ""]
    if run.skipped:
        lines += _table(["Kernel", "Reason"], [[s.label, s.reason] for s in run.skipped])
    else:
        lines += ["None."]

    warnings = _warnings(run)
    lines += ["", "## Warnings", ""]
    lines += [f"- {w}" for w in warnings] or ["None."]
    return "\n".join(lines) + "\n"


def _ridge_section(run: Run) -> List[str]:
    roof = _roofline(run)
    if roof is None:
        return ["No ridge points: the run needs a bandwidth and a compute ceiling."]
    lines: List[str] = []
    has_mb = roof.has("bandwidth", "measured")
    has_tb = roof.has("bandwidth", "theoretical")
    mb = roof.bandwidth("measured") if has_mb else None
    tb = roof.bandwidth("theoretical") if has_tb else None
    theo = {c.name: c for c in roof.compute("theoretical")}
    meas = roof.compute("measured")
    if mb is not None:
        lines.append(f"Against the measured bandwidth ceiling {mb.name}, {_fmt3(mb.value)} GB/s"
                     + (f" (theoretical {_fmt3(tb.value)} GB/s)." if tb is not None else "."))
    elif tb is not None:
        lines.append(f"No measured bandwidth ceiling; theoretical {tb.name} is {_fmt3(tb.value)} GB/s.")
    if tb is None and theo:
        lines.append("No theoretical bandwidth, so no theoretical ridge points.")
    lines.append("")
    rows: List[List[object]] = []
    for c in meas:
        t = theo.get(c.name)
        rows.append([
            c.name,
            f"{_fmt3(c.value)} GFLOP/s",
            _fmt3(c.value / mb.value) if mb is not None else _DASH,
            f"{_fmt3(t.value)} GFLOP/s" if t is not None else _DASH,
            _fmt3(t.value / tb.value) if (t is not None and tb is not None) else _DASH,
            _pct(c.value / t.value) if t is not None else _DASH,
        ])
    measured_names = {c.name for c in meas}
    for t in roof.compute("theoretical"):
        if t.name in measured_names:
            continue
        rows.append([
            t.name, _DASH, _DASH, f"{_fmt3(t.value)} GFLOP/s",
            _fmt3(t.value / tb.value) if tb is not None else _DASH, _DASH,
        ])
    if mb is not None and tb is not None:
        rows.append([f"{mb.name} (bandwidth)", f"{_fmt3(mb.value)} GB/s", _DASH,
                     f"{_fmt3(tb.value)} GB/s", _DASH, _pct(mb.value / tb.value)])
    header = ["Ceiling", "Measured", "Ridge, measured (FLOP/B)", "Theoretical", "Ridge, theoretical (FLOP/B)",
              "Measured / theoretical"]
    keep = [i for i in range(len(header)) if not (i == 4 and tb is None)]  # no theoretical bandwidth: no column
    lines += _table(
        [header[i] for i in keep],
        [[row[i] for i in keep] for row in rows],
        "".join("lrrrrr"[i] for i in keep),
    )
    return lines


def to_csv(run: Run) -> str:
    """One CSV row per measurement (str, "\\n" line endings), with a header.

    Columns: :data:`CSV_COLUMNS`. ``params`` is a JSON object; times in
    seconds, ``intensity`` in FLOP/byte, ``gflops`` in GFLOP/s, ``gbps`` in
    GB/s, ``cv`` a fraction, ``valid`` ``true``/``false``. Floats are written
    with full precision (``repr``).
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for m in run.measurements:
        w.writerow([
            m.suite, m.kernel, m.dtype, json.dumps(dict(m.params), separators=(",", ":")), m.flops, m.bytes,
            repr(m.intensity), repr(m.median_s), repr(m.min_s), repr(m.max_s), repr(m.cv), repr(m.gflops),
            repr(m.gbps), "true" if m.valid else "false",
        ])
    return buf.getvalue()


def _ceiling_key(c: Ceiling) -> Tuple[str, str, str]:
    return (c.source, c.kind, c.name)


def compare_markdown(a: Run, b: Run) -> str:
    """Side-by-side Markdown comparison of two runs, A and B.

    A ceilings table over the union of (source, kind, name) with the value in
    A, the value in B and the ratio B/A (``—`` where one run lacks it), then
    the ridge point (FLOP/byte) of every measured compute ceiling against each
    run's measured bandwidth, with the ratio B/A.
    """
    lines = [
        f"# Roofline comparison: {a.device_name} vs {b.device_name}",
        "",
        f"- **A**: {a.device_name} ({a.backend}), {run_date(a.created)}, {a.tool.name} {a.tool.version}"
        + ("" if a.complete else " — INTERRUPTED, partial results"),
        f"- **B**: {b.device_name} ({b.backend}), {run_date(b.created)}, {b.tool.name} {b.tool.version}"
        + ("" if b.complete else " — INTERRUPTED, partial results"),
        "",
        "## Ceilings",
        "",
    ]
    ca = {_ceiling_key(c): c for c in a.ceilings}
    cb = {_ceiling_key(c): c for c in b.ceilings}
    keys = list(ca) + [k for k in cb if k not in ca]
    keys.sort(key=lambda k: (k[0] != "measured", k[1] != "bandwidth", -(ca.get(k) or cb[k]).value))
    rows: List[List[object]] = []
    for k in keys:
        x, y = ca.get(k), cb.get(k)
        ref = x if x is not None else y
        unit = ref.unit if ref is not None else ""
        rows.append([
            k[2], k[1], k[0],
            f"{_fmt3(x.value)} {unit}" if x is not None else _DASH,
            f"{_fmt3(y.value)} {unit}" if y is not None else _DASH,
            f"{y.value / x.value:.2f}×" if (x is not None and y is not None) else _DASH,
        ])
    if rows:
        lines += _table(["Ceiling", "Kind", "Source", "A", "B", "B/A"], rows, "lllrrr")
    else:
        lines += ["Neither run has ceilings."]

    lines += ["", "## Ridge points (measured, FLOP/byte)", ""]
    ra, rb = _ridges(a), _ridges(b)
    names = list(ra) + [n for n in rb if n not in ra]
    if names:
        lines += _table(
            ["Compute ceiling", "A", "B", "B/A"],
            [
                [
                    n,
                    _fmt3(ra[n]) if n in ra else _DASH,
                    _fmt3(rb[n]) if n in rb else _DASH,
                    f"{rb[n] / ra[n]:.2f}×" if (n in ra and n in rb) else _DASH,
                ]
                for n in names
            ],
            "lrrr",
        )
    else:
        lines += ["No measured ridge points in either run."]
    return "\n".join(lines) + "\n"


def _ridges(run: Run) -> Dict[str, float]:
    roof = _roofline(run)
    if roof is None or not roof.has("bandwidth", "measured"):
        return {}
    return roof.ridge_points("measured")
