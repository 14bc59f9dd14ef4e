"""The node report of a run on several GPUs at once: ``node.md`` and ``node.json``.

One row per GPU (its folder, device, PCI bus id and serial, how its process ended, its wall time)
and one column per GPU of every metric: for roofline runs each measured ceiling (GB/s, GFLOP/s;
higher is better), for dispatch studies the median (p50) of each valid native and Python
throughput and round-trip series (µs per launch; lower is better). The node's median of a metric
is over the GPUs that have it (:func:`~apple_roofline.roofline.compare.compare.baseline_value`, the
comparison's median baseline). A GPU is an **outlier** on a metric when it is more than
``outlier_pct`` % worse than that median (below it for ceilings, above it for latencies), or when it
lacks a metric the others have, or has no results at all: each outlier line names the GPU's PCI
bus id and serial, so that an operator can find the board.

The serial comes from the run's device description where it has one, else from NVML by the PCI bus
id (:func:`nvml_serials`; ``nvidia-ml-py``), else it is "unknown".
"""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import OptionError
from ..roofline.compare.compare import BASELINE_MEDIAN, baseline_value, ratio_text
from ..roofline.model.run import Run
from ..study.document import Document
from ..study.files import write_text_atomic
from ..study.markdown import status_text
from ..text import DASH, markdown_table, sig_figs

__all__ = [
    "DEFAULT_OUTLIER_PCT",
    "OUTLIER_PCT_RANGE",
    "check_outlier_pct",
    "Metric",
    "Member",
    "Outlier",
    "metrics_of",
    "find_outliers",
    "nvml_serials",
    "node_markdown",
    "node_dict",
    "write_node_report",
    "with_serials",
    "NODE_FILES",
]

#: ``--outlier-pct``'s default: a GPU more than this many percent worse than the node's median is flagged.
DEFAULT_OUTLIER_PCT = 3.0
#: ``outlier_pct``'s valid values, in words.
OUTLIER_PCT_RANGE = "a finite number of percent, 0 or more"
#: The files of a node report, in the node's folder.
NODE_FILES: Tuple[str, ...] = ("node.md", "node.json")
_DISPATCH_MEASURES = ("throughput", "round_trip")
_DISPATCH_PATHS = ("native", "python")


def check_outlier_pct(value: object) -> float:
    """``value`` (a number, or its text: ``"5"``, ``" 2.5 "``) as the percent a GPU may be worse than
    the node's median, or a run than its reference, before it is flagged: finite and 0 or more.

    Raises:
        OptionError: (option ``outlier_pct``) not a number (``"abc"``), or out of range (``nan``,
            ``inf``, ``-5``).
    """
    try:
        pct = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]  # a number or text
    except (TypeError, ValueError):
        raise OptionError("outlier_pct", value, OUTLIER_PCT_RANGE, problem="is not a number") from None
    if isinstance(value, bool) or not (math.isfinite(pct) and pct >= 0.0):
        raise OptionError("outlier_pct", value, OUTLIER_PCT_RANGE)
    return pct


@dataclass(frozen=True)
class Metric:
    """One compared figure: ``name``, ``unit``, and whether higher values are better."""

    name: str
    unit: str
    higher_is_better: bool = True


@dataclass(frozen=True)
class Member:
    """One GPU of the node: ``name`` (its folder, ``cuda0``), ``device`` (``cuda:0``), ``doc`` (its
    results, None where it left none), ``file`` (their path relative to the node's folder),
    ``returncode`` and ``wall_s`` of its process (None for saved results), ``serial`` ("" unknown)
    and ``note`` (why it has no results)."""

    name: str
    device: str
    doc: Optional[Document]
    file: str = ""
    returncode: Optional[int] = None
    wall_s: Optional[float] = None
    serial: str = ""
    note: str = ""

    @property
    def pci_bus_id(self) -> str:
        """The PCI bus id its results record ("" where none)."""
        return str(self.doc.device.get("pci_bus_id", "") or "") if self.doc is not None else ""

    @property
    def status(self) -> str:
        """``complete``, the partial study's status (:func:`~apple_roofline.study.markdown.status_text`:
        interrupted, or cut by a budget), or ``no results (<note>)``."""
        if self.doc is None:
            return f"no results ({self.note})" if self.note else "no results"
        return status_text(self.doc)


@dataclass(frozen=True)
class Outlier:
    """A GPU worse than the node on one metric: ``value`` (None: it lacks the metric), the node's
    ``median``, and ``worse_pct`` (how much worse than the median, in %; None where not a number)."""

    member: Member
    metric: Metric
    value: Optional[float]
    median: Optional[float]
    worse_pct: Optional[float]

    def sentence(self) -> str:
        """One line naming the GPU, its PCI bus id and serial, and what is wrong."""
        m = self.member
        where = f"**{m.name}** ({m.device}, PCI {m.pci_bus_id or 'unknown'}, serial {m.serial or 'unknown'})"
        if self.metric.name == "":
            return f"{where}: {m.status}"
        if self.value is None:
            return f"{where}: no {self.metric.name}, which the other GPUs have"
        side = "below" if self.metric.higher_is_better else "above"
        return (
            f"{where}: {self.metric.name} {sig_figs(self.value)} {self.metric.unit} is {self.worse_pct:.1f} % "
            f"{side} the node's median {sig_figs(self.median or 0.0)} {self.metric.unit}"
        )


def metrics_of(doc: Document) -> Dict[Metric, float]:
    """The compared figures of one GPU's results (module docstring); empty for other kinds."""
    if isinstance(doc, Run):
        return {Metric(c.name, c.unit, True): c.value for c in doc.ceilings if c.source == "measured"}
    series = getattr(doc, "series", None)
    if doc.KIND != "dispatch" or series is None:
        return {}
    return {
        Metric(s.label, "µs", False): s.distribution.p50 * 1e6
        for s in series
        if s.valid and s.measure in _DISPATCH_MEASURES and s.path in _DISPATCH_PATHS
    }


def _table(members: Sequence[Member]) -> Tuple[List[Metric], List[Dict[Metric, float]]]:
    values = [metrics_of(m.doc) if m.doc is not None else {} for m in members]
    metrics = list(dict.fromkeys(k for v in values for k in v))
    return metrics, values


def find_outliers(members: Sequence[Member], outlier_pct: float = DEFAULT_OUTLIER_PCT) -> List[Outlier]:
    """Every GPU worse than the node's median by more than ``outlier_pct`` % on a metric, lacking a
    metric another GPU has, or without results (module docstring), in GPU then metric order.

    Raises:
        ValueError: ``outlier_pct`` negative or not finite.
    """
    if not 0.0 <= outlier_pct < float("inf"):
        raise ValueError(f"outlier_pct {outlier_pct!r} is out of range (valid: 0 or more)")
    metrics, values = _table(members)
    out: List[Outlier] = []
    for member, vals in zip(members, values):
        if member.doc is None or member.doc.partial:
            out.append(Outlier(member, Metric("", ""), None, None, None))
        if member.doc is None:
            continue
        for metric in metrics:
            median = baseline_value(values, metric, BASELINE_MEDIAN)
            value = vals.get(metric)
            if value is None:
                out.append(Outlier(member, metric, None, median, None))
                continue
            if not median:
                continue
            worse = (median - value) / median if metric.higher_is_better else (value - median) / median
            if worse * 100.0 > outlier_pct:
                out.append(Outlier(member, metric, value, median, worse * 100.0))
    return out


def nvml_serials(bus_ids: Sequence[str], module: Optional[Any] = None) -> Dict[str, str]:
    """The board serial of each PCI bus id NVML knows (``nvmlDeviceGetSerial``); ids it does not
    know, or every id when NVML or ``nvidia-ml-py`` is missing, are left out. ``module`` replaces
    ``pynvml`` (tests). Opens no CUDA context."""
    ids = [b for b in bus_ids if b]
    if not ids:
        return {}
    nvml = module
    if nvml is None:
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError:
            return {}
    try:
        nvml.nvmlInit()
    except Exception:  # noqa: BLE001 — no driver or no NVML: serials unknown
        return {}
    out: Dict[str, str] = {}
    try:
        for bus in ids:
            try:
                raw = nvml.nvmlDeviceGetSerial(nvml.nvmlDeviceGetHandleByPciBusId(bus.encode()))
            except Exception:  # noqa: BLE001 — this board has no readable serial (consumer GPUs)
                continue
            out[bus] = (raw.decode() if isinstance(raw, bytes) else str(raw)).strip()
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return out


def _wall(s: Optional[float]) -> str:
    return f"{s:.1f} s" if s is not None else DASH


def node_markdown(
    members: Sequence[Member],
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    *,
    title: str = "",
    wall_s: Optional[float] = None,
) -> str:
    """node.md (str ending in a newline): the GPUs, the metrics per GPU with each one's ratio to
    the node's median (outliers in bold), and the outliers, one line each."""
    metrics, values = _table(members)
    outliers = find_outliers(members, outlier_pct)
    flagged = {(o.member.name, o.metric) for o in outliers}
    lines = [f"# Node: {title or 'GPUs measured at once'}", ""]
    lines += [
        f"{len(members)} GPUs, one process each, at the same time"
        + (f"; {_wall(wall_s)} wall time in all." if wall_s is not None else ".")
        + f" Outlier: more than {outlier_pct:g} % worse than the node's median on a metric "
        "(below it for ceilings, above it for latencies), or without results.",
        "",
    ]
    lines += ["## GPUs", ""]
    lines += markdown_table(
        ["GPU", "Device", "Name", "PCI bus id", "Serial", "Status", "Exit", "Wall time", "File"],
        [
            [
                m.name,
                m.device,
                m.doc.device_name if m.doc is not None else DASH,
                m.pci_bus_id or DASH,
                m.serial or "unknown",
                m.status,
                DASH if m.returncode is None else str(m.returncode),
                _wall(m.wall_s),
                m.file or DASH,
            ]
            for m in members
        ],
        "lllllllrl",
    )
    lines += ["", "## Metrics", ""]
    if metrics:
        rows = []
        for metric in metrics:
            median = baseline_value(values, metric, BASELINE_MEDIAN)
            cells = []
            for member, vals in zip(members, values):
                v = vals.get(metric)
                cell = DASH if v is None else f"{sig_figs(v)} ({ratio_text(v, median)})"
                cells.append(f"**{cell}**" if (member.name, metric) in flagged else cell)
            rows.append([metric.name, metric.unit, *cells, sig_figs(median) if median is not None else DASH])
        lines += ["Each value with its ratio to the node's median.", ""]
        lines += markdown_table(
            ["Metric", "Unit", *[m.name for m in members], "Median"], rows, "ll" + "r" * (len(members) + 1)
        )
    else:
        lines.append("No GPU left results to compare.")
    lines += ["", "## Outliers", ""]
    lines += [f"- {o.sentence()}" for o in outliers] or [
        f"None: every GPU is within {outlier_pct:g} % of the node's median on every metric."
    ]
    return "\n".join(lines) + "\n"


def node_dict(
    members: Sequence[Member],
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    *,
    title: str = "",
    wall_s: Optional[float] = None,
) -> Dict[str, Any]:
    """node.json as a dict: ``title``, ``outlier_pct``, ``wall_s``, ``gpus`` (name, device, device
    name, PCI bus id, serial, status, complete, returncode, wall_s, file, and ``metrics``:
    name -> value), ``median`` (name -> value), ``units`` and ``outliers`` (gpu, PCI bus id, serial,
    metric, value, median, worse_pct; metric "" for a GPU without complete results)."""
    metrics, values = _table(members)
    return {
        "title": title,
        "outlier_pct": outlier_pct,
        "wall_s": wall_s,
        "gpus": [
            {
                "name": m.name,
                "device": m.device,
                "device_name": m.doc.device_name if m.doc is not None else None,
                "pci_bus_id": m.pci_bus_id or None,
                "serial": m.serial or None,
                "status": m.status,
                "complete": bool(m.doc is not None and not m.doc.partial),
                "returncode": m.returncode,
                "wall_s": m.wall_s,
                "file": m.file or None,
                "metrics": {k.name: v for k, v in vals.items()},
            }
            for m, vals in zip(members, values)
        ],
        "median": {k.name: baseline_value(values, k, BASELINE_MEDIAN) for k in metrics},
        "units": {k.name: k.unit for k in metrics},
        "outliers": [
            {
                "gpu": o.member.name,
                "pci_bus_id": o.member.pci_bus_id or None,
                "serial": o.member.serial or None,
                "metric": o.metric.name,
                "value": o.value,
                "median": o.median,
                "worse_pct": o.worse_pct,
            }
            for o in find_outliers(members, outlier_pct)
        ],
    }


def write_node_report(
    out: Path,
    members: Sequence[Member],
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    *,
    title: str = "",
    wall_s: Optional[float] = None,
) -> List[Path]:
    """Write ``out``/node.md and ``out``/node.json (atomically); returns their paths.

    Raises:
        OSError: a file could not be written.
    """
    md, js = out / NODE_FILES[0], out / NODE_FILES[1]
    write_text_atomic(md, node_markdown(members, outlier_pct, title=title, wall_s=wall_s))
    write_text_atomic(
        js, json.dumps(node_dict(members, outlier_pct, title=title, wall_s=wall_s), indent=2, ensure_ascii=False) + "\n"
    )
    return [md, js]


def with_serials(members: Sequence[Member], serials: Mapping[str, str]) -> List[Member]:
    """``members`` with each one's serial: its device description's ``serial`` where it has one,
    else ``serials`` by PCI bus id."""
    out = []
    for m in members:
        own = str(m.doc.device.get("serial", "") or "") if m.doc is not None else ""
        out.append(
            Member(
                m.name,
                m.device,
                m.doc,
                m.file,
                m.returncode,
                m.wall_s,
                own or serials.get(m.pci_bus_id, "") or m.serial,
                m.note,
            )
        )
    return out
