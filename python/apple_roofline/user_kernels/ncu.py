"""An Nsight Compute export as dots on the roofline: one per kernel and memory level.

Input: ``ncu --csv --page raw`` (or ``ncu --import REPORT --csv --page raw``): a header row
(``"ID"``, ..., ``"Kernel Name"``, ..., one column per metric), a row of units, then one row per
launch. Lines before the header (ncu's ``==PROF==`` log, the application's output) are skipped.
Units and thousands separators are read by :mod:`.units`.

The metrics are those of ncu's own hierarchical roofline sections
(``SpeedOfLight_HierarchicalSingleRooflineChart``, ``..DoubleRooflineChart``,
``..HalfRooflineChart``, ``..TensorRooflineChart``; their ``.section`` files name them):

* work, per precision, as the sections count it: FP32 ``fadd + fmul + 2 × ffma``, FP64 ``dadd +
  dmul + 2 × dfma``, FP16 ``2 × hadd + 2 × hmul + 4 × hfma`` (packed half2), from
  ``smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed`` × the SM clock
  ``smsp__cycles_elapsed.avg.per_second`` (the sections' achieved work) or, where a user collected
  the counts, ``sm__sass_thread_inst_executed_op_{op}_pred_on.sum`` (or ``smsp__``...); and the
  tensor pipe's operations ``sm__ops_path_tensor_src_*`` (``.sum.per_cycle_elapsed`` ×
  ``sm__cycles_elapsed.avg.per_second``, or ``.sum``), their precision from the path's source
  type; a path that another present path contains (``src_fp16_dst_fp32`` under ``src_fp16``,
  ``_sparsity_on``/``_off`` under their total) and the per-instruction ``_op_`` paths are not
  counted twice; a kernel whose FLOPs are mostly the tensor pipe's is a ``"tensor"`` dot (judged
  against its precision's GEMM roof), any other an ``"fma"`` one (its precision's vector roof);
* bytes per level: DRAM ``dram__bytes.sum.per_second`` (or ``dram__bytes.sum``); L2 the
  sections' ``derived__lts__lts2xbar_bytes.sum.per_second`` (``lts__lts2xbar_cycles_active`` ×
  32 B), else the total ``lts__t_bytes.sum``; L1 the sections'
  ``derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second`` (``_mem_lg`` before Hopper;
  ``l1tex__lsu_writeback_active_mem_lg[ds]`` × 128 B), else the total ``l1tex__t_bytes.sum``.
  A rate is turned into bytes by the launch's duration;
* time: ``gpu__time_duration.sum``.

The launches of one kernel name are summed: FLOPs, bytes and time, so its performance is its FLOPs
over its total time. A kernel without FLOPs (integer-only: every floating-point and tensor count is
0), without the work metrics, without a duration, or a level without its bytes (or with 0 bytes) is
an :class:`~.model.Unplaced` naming what it lacks.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..study.files import ResultsError
from .model import KernelDot, KernelSet, Unplaced
from .units import UnitError, parse_number, unit_scale

__all__ = ["read_ncu_csv", "looks_like_ncu", "FP_OPS", "LEVEL_BYTES", "TIME", "TENSOR_PREFIX"]

TIME = "gpu__time_duration.sum"
#: (precision, operation, weight): the sections' FLOPs per predicated-on thread instruction.
FP_OPS: Tuple[Tuple[str, str, float], ...] = (
    ("fp32", "fadd", 1.0), ("fp32", "fmul", 1.0), ("fp32", "ffma", 2.0),
    ("fp64", "dadd", 1.0), ("fp64", "dmul", 1.0), ("fp64", "dfma", 2.0),
    ("fp16", "hadd", 2.0), ("fp16", "hmul", 2.0), ("fp16", "hfma", 4.0),
)
TENSOR_PREFIX = "sm__ops_path_tensor_src_"
_SM_CLOCK = {"smsp": "smsp__cycles_elapsed.avg.per_second", "sm": "sm__cycles_elapsed.avg.per_second"}
#: Per level, the metrics of its bytes, first found wins: (metric, factor to bytes, is a rate).
LEVEL_BYTES: Mapping[str, Tuple[Tuple[str, float, bool], ...]] = {
    "DRAM": (("dram__bytes.sum.per_second", 1.0, True), ("dram__bytes.sum", 1.0, False)),
    "L2": (("derived__lts__lts2xbar_bytes.sum.per_second", 1.0, True),
           ("lts__lts2xbar_cycles_active.sum.per_second", 32.0, True),
           ("lts__t_bytes.sum", 1.0, False), ("lts__t_bytes.sum.per_second", 1.0, True)),
    "L1": (("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second", 1.0, True),
           ("derived__l1tex__lsu_writeback_bytes_mem_lg.sum.per_second", 1.0, True),
           ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", 128.0, True),
           ("l1tex__lsu_writeback_active_mem_lg.sum.per_second", 128.0, True),
           ("l1tex__t_bytes.sum", 1.0, False), ("l1tex__t_bytes.sum.per_second", 1.0, True)),
}
_TENSOR_PRECISION = (("bf16", "bf16"), ("tf32", "tf32"), ("fp16", "fp16"), ("fp64", "fp64"), ("fp8", "fp8"),
                     ("fp4", "fp8"), ("fp6", "fp8"), ("int8", "int8"), ("int4", "int8"), ("int1", "int8"))
_NAME = "Kernel Name"
#: The key under which a launch's work also sums its tensor-pipe operations (not a precision).
_TENSOR = "tensor pipe"
#: The metrics this reader uses start so (others, with units such as ``register/thread``, are left out).
_USED = ("gpu__time_duration", "dram__", "lts__", "l1tex__", "derived__l1tex__", "derived__lts__", "sm__", "smsp__")


def _fp_metrics(op: str) -> Tuple[Tuple[str, bool], ...]:
    """The metrics of one instruction's count, as (name, is a rate per cycle), first found wins."""
    base = f"sass_thread_inst_executed_op_{op}_pred_on.sum"
    return ((f"smsp__{base}.per_cycle_elapsed", True), (f"sm__{base}.per_cycle_elapsed", True),
            (f"sm__{base}", False), (f"smsp__{base}", False))


def _tensor_precision(path: str) -> str:
    src = path[len(TENSOR_PREFIX):].split("_dst_")[0]
    for token, precision in _TENSOR_PRECISION:
        if token in src.split("_"):
            return precision
    return "fp16"


def _tensor_paths(columns: Sequence[str]) -> Dict[str, Tuple[str, bool]]:
    """The tensor paths counted once each (module docstring): path -> (metric, is a rate)."""
    found: Dict[str, Tuple[str, bool]] = {}
    for col in columns:
        if not col.startswith(TENSOR_PREFIX):
            continue
        for suffix, rate in ((".sum.per_cycle_elapsed", True), (".sum", False)):
            if col.endswith(suffix):
                path = col[: -len(suffix)]
                if path not in found or rate:
                    found[path] = (col, rate)
    return {p: v for p, v in found.items() if not any(p != q and p.startswith(q + "_") for q in found)}


def looks_like_ncu(text: str) -> bool:
    """Whether ``text`` holds an ncu raw CSV header (a row starting ``"ID"`` naming ``Kernel Name``)."""
    return _header_index(text.splitlines()) is not None


def _header_index(lines: Sequence[str]) -> Optional[int]:
    for i, line in enumerate(lines):
        s = line.lstrip("\ufeff").strip()
        if s.startswith('"ID"') or s.startswith("ID,"):
            row = next(csv.reader([s]), [])
            if _NAME in row:
                return i
    return None


_DEVICE = "device__attribute_display_name"


@dataclass
class _Launch:
    values: Dict[str, float]
    device: Optional[str] = None


def _rows(text: str, source: str) -> Tuple[List[str], List[Tuple[str, _Launch]]]:
    lines = text.splitlines()
    start = _header_index(lines)
    if start is None:
        what = ("ncu's details page (export with --page raw)" if '"Metric Name"' in text
                else "no header row starting \"ID\" with a \"Kernel Name\" column")
        raise ResultsError(f"{source}: not an Nsight Compute raw CSV export ({what}); "
                           f"write one with `ncu --csv --page raw ...` or `ncu --import REPORT --csv --page raw`")
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if not l.startswith("==")))))
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    units: List[str] = [""] * len(header)
    if body and (not body[0] or not body[0][0].strip()):  # the row of units has no launch ID
        units = [u.strip() for u in body[0]] + [""] * (len(header) - len(body[0]))
        body = body[1:]
    scales: List[Optional[float]] = []
    for h, u in zip(header, units):
        try:
            scales.append(unit_scale(u))
        except UnitError as exc:  # a metric this reader uses must be readable; any other is left out
            scales.append(_bad_unit(source, h, exc) if h.startswith(_USED) else None)
    name_col = header.index(_NAME)
    out: List[Tuple[str, _Launch]] = []
    for n, row in enumerate(body):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ResultsError(f"{source}: launch row {n + 1} has {len(row)} cells, the header {len(header)} "
                               f"(a truncated or edited export?)")
        launch = _Launch({})
        for h, cell, scale in zip(header, row, scales):
            if h == _DEVICE:
                launch.device = cell.strip() or None
            if "__" not in h:
                continue
            v = parse_number(cell)
            if v is not None and scale is not None:
                launch.values[h] = v * scale
        out.append((row[name_col].strip(), launch))
    if not out:
        raise ResultsError(f"{source}: an Nsight Compute export without launches (no rows after the header)")
    return header, out


def _bad_unit(source: str, column: str, exc: Exception) -> float:
    raise ResultsError(f"{source}: column {column}: {exc} (ncu writes byte, Kbyte ..., nsecond ..., "
                       f"inst, cycle/second ...)")


def _first(launch: _Launch, names: Sequence[str]) -> Optional[str]:
    return next((n for n in names if n in launch.values), None)


@dataclass
class _Totals:
    launches: int = 0
    seconds: float = 0.0
    work: Optional[Dict[str, float]] = None
    work_metrics: Tuple[str, ...] = ()
    missing_work: Tuple[str, ...] = ()
    missing_time: bool = False
    level_bytes: Optional[Dict[str, float]] = None
    level_metric: Optional[Dict[str, str]] = None
    level_missing: Optional[Dict[str, str]] = None


def _work(launch: _Launch, seconds: float, tensors: Mapping[str, Tuple[str, bool]]) -> Tuple[Dict[str, float], List[str], List[str]]:
    """FLOPs of one launch per precision, the metrics used and those missing."""
    work: Dict[str, float] = {}
    used: List[str] = []
    missing: List[str] = []
    for precision, op, weight in FP_OPS:
        options = _fp_metrics(op)
        name = _first(launch, [n for n, _r in options])
        if name is None:
            missing.append(options[0][0])
            continue
        rate = dict(options)[name]
        count = launch.values[name]
        if rate:
            clock_name = _SM_CLOCK[name.split("__")[0]]
            if clock_name not in launch.values:
                missing.append(clock_name)
                continue
            count *= launch.values[clock_name] * seconds
            used.append(clock_name)
        work[precision] = work.get(precision, 0.0) + weight * count
        used.append(name)
    for path, (name, rate) in tensors.items():
        if name not in launch.values:
            continue
        count = launch.values[name]
        if rate:
            if _SM_CLOCK["sm"] not in launch.values:
                missing.append(_SM_CLOCK["sm"])
                continue
            count *= launch.values[_SM_CLOCK["sm"]] * seconds
            used.append(_SM_CLOCK["sm"])
        p = _tensor_precision(path)
        work[p] = work.get(p, 0.0) + count
        work[_TENSOR] = work.get(_TENSOR, 0.0) + count
        used.append(name)
    return work, used, missing


def read_ncu_csv(text: str, *, source: str = "<ncu csv>") -> KernelSet:
    """The dots of an ncu raw CSV export (module docstring): per kernel name, one
    :class:`~.model.KernelDot` per level (L1, L2, DRAM) it has bytes at, and an
    :class:`~.model.Unplaced` for each kernel or level that cannot be placed.

    Raises:
        ResultsError: one line naming ``source``: not an ncu raw export (no header row with ``ID``
            and ``Kernel Name``), a unit ncu does not write, a row of the wrong length, no launches.
    """
    header, launches = _rows(text, source)
    tensors = _tensor_paths(header)
    totals: Dict[str, _Totals] = {}
    for kernel, launch in launches:
        t = totals.setdefault(kernel, _Totals(work={}, level_bytes={}, level_metric={}, level_missing={}))
        assert t.work is not None and t.level_bytes is not None and t.level_metric is not None and t.level_missing is not None
        t.launches += 1
        seconds = launch.values.get(TIME)
        if seconds is None or seconds <= 0:
            t.missing_time = True
            continue
        t.seconds += seconds
        work, used, missing = _work(launch, seconds, tensors)
        if not used:
            t.missing_work = tuple(dict.fromkeys(t.missing_work + tuple(missing)))
        for p, f in work.items():
            t.work[p] = t.work.get(p, 0.0) + f
        t.work_metrics = tuple(dict.fromkeys(t.work_metrics + tuple(used)))
        for level, options in LEVEL_BYTES.items():
            name = _first(launch, [n for n, _f, _r in options])
            if name is None:
                t.level_missing[level] = _level_wanted(options)
                continue
            factor, rate = next((f, r) for n, f, r in options if n == name)
            b = launch.values[name] * factor * (seconds if rate else 1.0)
            t.level_bytes[level] = t.level_bytes.get(level, 0.0) + b
            t.level_metric[level] = name
    dots: List[KernelDot] = []
    unplaced: List[Unplaced] = []
    for kernel, t in totals.items():
        assert t.work is not None and t.level_bytes is not None and t.level_metric is not None and t.level_missing is not None
        if t.missing_time or t.seconds <= 0:
            unplaced.append(Unplaced(kernel, f"no duration: {TIME} is missing or 0 for a launch", (TIME,),
                                     launches=t.launches))
            continue
        if not t.work_metrics:
            unplaced.append(Unplaced(
                kernel, "no FLOP metrics: collect the hierarchical roofline sections "
                "(--section SpeedOfLight_HierarchicalSingleRooflineChart ...) or the instruction counts "
                "(--metrics sm__sass_thread_inst_executed_op_ffma_pred_on.sum,...)", t.missing_work,
                seconds=t.seconds, launches=t.launches))
            continue
        tensor = t.work.pop(_TENSOR, 0.0)
        flops = sum(t.work.values())
        if flops <= 0:
            unplaced.append(Unplaced(
                kernel, "no floating-point operations: its FADD/FMUL/FFMA, DADD/DMUL/DFMA, HADD/HMUL/HFMA and "
                "tensor-pipe counts are all 0 (an integer-only kernel has no FLOPs, so no arithmetic intensity)",
                (), seconds=t.seconds, launches=t.launches))
            continue
        precision = max(t.work, key=lambda p: t.work[p] if t.work else 0.0)
        for level in ("L1", "L2", "DRAM"):
            if level in t.level_missing and level not in t.level_bytes:
                unplaced.append(Unplaced(kernel, f"no {level} bytes: the export lacks {t.level_missing[level]}",
                                         (t.level_missing[level],), level, t.seconds, t.launches))
                continue
            b = t.level_bytes.get(level, 0.0)
            if b <= 0:
                unplaced.append(Unplaced(kernel, f"0 bytes at {level} ({t.level_metric.get(level, '?')} = 0): "
                                         "no arithmetic intensity there", (), level, t.seconds, t.launches))
                continue
            dots.append(KernelDot(kernel, level, flops, b, t.seconds, t.launches, precision,
                                  {p: f for p, f in t.work.items() if f > 0}, "ncu",
                                  t.work_metrics + (t.level_metric[level], TIME),
                                  "tensor" if tensor > flops / 2 else "fma"))
    device = next((l.device for _k, l in launches if l.device), None)
    return KernelSet(tuple(dots), tuple(unplaced), source, "ncu", device)


def _level_wanted(options: Sequence[Tuple[str, float, bool]]) -> str:
    """What a level lacks, in words: the sections' metric or the simple total."""
    total = next((n for n, _f, rate in options if not rate), options[-1][0])
    return options[0][0] if total == options[0][0] else f"{options[0][0]} or {total}"
