"""An Nsight Compute export as dots on the roofline: one per kernel and memory level.

Input: ``ncu --csv --page raw`` (or ``ncu --import REPORT --csv --page raw``), read into launches
by :mod:`.ncu_page` (the details page, a cell that is no finite number: errors); units and
thousands separators by :mod:`.units`.

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

The exports people make most are read alike: ``--set roofline`` (the hierarchical sections and
``SpeedOfLight_RooflineChart``, whose FP32 and FP64 work and DRAM traffic are the same metrics),
the hierarchical sections alone, and the totals (counts and byte totals).

The launches of one kernel name are summed: FLOPs, bytes and time, so its performance is its FLOPs
over its total time; its precision is the one most of its FLOPs were done in (the others stay in
:attr:`~.model.KernelDot.work`, shown beside it). A launch that lacks a metric its kernel's other
launches have makes the kernel (or that level) unplaced, never a sum with a 0 in it; a sum, rate or
intensity that is not finite is an error. A kernel is an :class:`~.model.Unplaced` naming the
metric it lacks: without a duration; without the work metrics; with tensor-pipe instructions
(``sm__inst_executed_pipe_tensor.sum``, collected with the totals) beyond what its HFMAs account
for (the compiler issues HFMA2 to that pipe: one per thread in the CuPy kernels recorded in
``tests/unit/data``, counted as HFMA by ncu and its half-precision chart) but no
``sm__ops_path_tensor_src_*`` to count their operations (a cuBLAS HGEMM collected with the totals);
with no FP instruction and neither tensor count (a tensor-core kernel cannot be told from an
integer one); or integer-only (every FP count 0 and the tensor pipe idle: the lacks column names
those counts). A level without its bytes, or with 0, is unplaced for that level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..study.files import ResultsError
from .model import KernelDot, KernelSet, Unplaced
from .ncu_page import Launch, header_index, read_page

__all__ = ["read_ncu_csv", "looks_like_ncu", "FP_OPS", "LEVEL_BYTES", "TIME", "TENSOR_PREFIX"]

TIME = "gpu__time_duration.sum"
#: (precision, operation, weight): the sections' FLOPs per predicated-on thread instruction.
FP_OPS: Tuple[Tuple[str, str, float], ...] = (
    ("fp32", "fadd", 1.0),
    ("fp32", "fmul", 1.0),
    ("fp32", "ffma", 2.0),
    ("fp64", "dadd", 1.0),
    ("fp64", "dmul", 1.0),
    ("fp64", "dfma", 2.0),
    ("fp16", "hadd", 2.0),
    ("fp16", "hmul", 2.0),
    ("fp16", "hfma", 4.0),
)
TENSOR_PREFIX = "sm__ops_path_tensor_src_"
_SM_CLOCK = {"smsp": "smsp__cycles_elapsed.avg.per_second", "sm": "sm__cycles_elapsed.avg.per_second"}
#: Per level, the metrics of its bytes, first found wins: (metric, factor to bytes, is a rate).
LEVEL_BYTES: Mapping[str, Tuple[Tuple[str, float, bool], ...]] = {
    "DRAM": (("dram__bytes.sum.per_second", 1.0, True), ("dram__bytes.sum", 1.0, False)),
    "L2": (
        ("derived__lts__lts2xbar_bytes.sum.per_second", 1.0, True),
        ("lts__lts2xbar_cycles_active.sum.per_second", 32.0, True),
        ("lts__t_bytes.sum", 1.0, False),
        ("lts__t_bytes.sum.per_second", 1.0, True),
    ),
    "L1": (
        ("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second", 1.0, True),
        ("derived__l1tex__lsu_writeback_bytes_mem_lg.sum.per_second", 1.0, True),
        ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", 128.0, True),
        ("l1tex__lsu_writeback_active_mem_lg.sum.per_second", 128.0, True),
        ("l1tex__t_bytes.sum", 1.0, False),
        ("l1tex__t_bytes.sum.per_second", 1.0, True),
    ),
}
_TENSOR_PRECISION = (
    ("bf16", "bf16"),
    ("tf32", "tf32"),
    ("fp16", "fp16"),
    ("fp64", "fp64"),
    ("fp8", "fp8"),
    ("fp4", "fp8"),
    ("fp6", "fp8"),
    ("int8", "int8"),
    ("int4", "int8"),
    ("int1", "int8"),
)
#: The key under which a launch's work also sums its tensor-pipe operations (not a precision).
_TENSOR = "tensor pipe"
#: The tensor pipe's warp instructions (the totals' ``sm__inst_executed_pipe_tensor.sum``; or its parts).
PIPE_TENSOR = "sm__inst_executed_pipe_tensor"
#: Where the tensor pipe's operations come from, for a kernel that lacks them.
TENSOR_HINT = (
    "collect them with --section SpeedOfLight_HierarchicalTensorRooflineChart (or --set roofline), or "
    "--metrics sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,"
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp64.sum,..."
)


def _fp_metrics(op: str) -> Tuple[Tuple[str, bool], ...]:
    """The metrics of one instruction's count, as (name, is a rate per cycle), first found wins."""
    base = f"sass_thread_inst_executed_op_{op}_pred_on.sum"
    return (
        (f"smsp__{base}.per_cycle_elapsed", True),
        (f"sm__{base}.per_cycle_elapsed", True),
        (f"sm__{base}", False),
        (f"smsp__{base}", False),
    )


def _tensor_precision(path: str) -> str:
    src = path[len(TENSOR_PREFIX) :].split("_dst_")[0]
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


def _pipe_metrics(columns: Sequence[str]) -> Tuple[str, ...]:
    """The tensor pipe's instruction counts the export has: the total, else its parts."""
    if f"{PIPE_TENSOR}.sum" in columns:
        return (f"{PIPE_TENSOR}.sum",)
    return tuple(c for c in columns if c.startswith(PIPE_TENSOR + "_") and c.endswith(".sum"))


def looks_like_ncu(text: str) -> bool:
    """Whether ``text`` holds an ncu CSV header (a row starting ``"ID"`` naming ``Kernel Name``):
    the raw page, or the details page that :func:`read_ncu_csv` refuses with the command to use."""
    return header_index(text.splitlines()) is not None


@dataclass
class _Reading:
    """What one launch gives: time, FLOPs per precision (and the tensor pipe's), HFMA thread
    instructions, tensor-pipe warp instructions (None: not collected), bytes per level."""

    seconds: float
    work: Dict[str, float] = field(default_factory=dict)
    used: Tuple[str, ...] = ()
    missing: Tuple[str, ...] = ()
    hfma: float = 0.0
    pipe: Optional[float] = None
    level_bytes: Dict[str, float] = field(default_factory=dict)
    level_metric: Dict[str, str] = field(default_factory=dict)


def _read_launch(
    launch: Launch, seconds: float, tensors: Mapping[str, Tuple[str, bool]], pipes: Sequence[str]
) -> _Reading:
    """What one launch of ``seconds`` gives (:class:`_Reading`): its FP and tensor-pipe work, the
    tensor pipe's instructions (where all of ``pipes`` are there) and its bytes per level."""
    r = _Reading(seconds)
    used: List[str] = []
    missing: List[str] = []
    for precision, op, weight in FP_OPS:
        options = _fp_metrics(op)
        name = launch.first([n for n, _r in options])
        if name is None:
            missing.append(options[0][0])
            continue
        count = _count(launch, name, dict(options)[name], _SM_CLOCK[name.split("__")[0]], seconds, used, missing)
        if count is None:
            continue
        r.work[precision] = r.work.get(precision, 0.0) + weight * count
        r.hfma += count if op == "hfma" else 0.0
        used.append(name)
    for path, (name, rate) in tensors.items():
        if not launch.has(name):
            missing.append(name)
            continue
        count = _count(launch, name, rate, _SM_CLOCK["sm"], seconds, used, missing)
        if count is None:
            continue
        p = _tensor_precision(path)
        r.work[p] = r.work.get(p, 0.0) + count
        r.work[_TENSOR] = r.work.get(_TENSOR, 0.0) + count
        used.append(name)
    if pipes and all(launch.has(m) for m in pipes):
        r.pipe = sum(launch.value(m) for m in pipes)
    r.used, r.missing = tuple(dict.fromkeys(used)), tuple(dict.fromkeys(missing))
    _read_levels(launch, r)
    return r


def _count(
    launch: Launch, name: str, rate: bool, clock: str, seconds: float, used: List[str], missing: List[str]
) -> Optional[float]:
    """Metric ``name``'s count over the launch: a rate per cycle times the SM ``clock`` metric (Hz,
    appended to ``used``) and ``seconds``; None, with ``clock`` appended to ``missing``, where the
    rate's clock is not there."""
    count = launch.value(name)
    if not rate:
        return count
    if not launch.has(clock):
        missing.append(clock)
        return None
    used.append(clock)
    return count * (launch.value(clock) * seconds)  # the launch's cycles (clock × seconds) first


def _read_levels(launch: Launch, r: _Reading) -> None:
    """Each level's bytes over the launch (``r.level_bytes``) and the metric they come from
    (``r.level_metric``): the first of :data:`LEVEL_BYTES` the launch has, a rate times its time."""
    for level, ways in LEVEL_BYTES.items():
        name = launch.first([n for n, _f, _r in ways])
        if name is not None:
            factor, rate = next((f, ra) for n, f, ra in ways if n == name)
            r.level_bytes[level] = launch.value(name) * factor * (r.seconds if rate else 1.0)
            r.level_metric[level] = name


def _finite(source: str, kernel: str, what: str, *values: float) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ResultsError(
            f"{source}: kernel {kernel!r}: its {what} is not a finite number (a cell out of range; valid: FLOPs, "
            f"bytes and seconds whose sums and ratios are finite)"
        )


def read_ncu_csv(text: str, *, source: str = "<ncu csv>") -> KernelSet:
    """The dots of an ncu raw CSV export (module docstring): per kernel name, one
    :class:`~.model.KernelDot` per level (L1, L2, DRAM) it has bytes at, and an
    :class:`~.model.Unplaced` naming the metric it lacks for each kernel or level that cannot be placed.

    Raises:
        ResultsError: one line naming ``source``: not an ncu raw export (no header row with ``ID``
            and ``Kernel Name``; ncu's details page), a unit ncu does not write, a row of the wrong
            length, no launches; a cell that is no finite number (the kernel, metric and cell named);
            a kernel whose FLOPs, bytes, time or rates are not finite.
    """
    header, launches = read_page(text, source)
    tensors = _tensor_paths(header)
    pipes = _pipe_metrics(header) if not tensors else ()
    by_kernel: Dict[str, List[Launch]] = {}
    for launch in launches:
        by_kernel.setdefault(launch.kernel, []).append(launch)
    dots: List[KernelDot] = []
    unplaced: List[Unplaced] = []
    for kernel, mine in by_kernel.items():
        d, u = _kernel(source, kernel, mine, tensors, pipes)
        dots += d
        unplaced += u
    device = next((launch.device for launch in launches if launch.device), None)
    return KernelSet(tuple(dots), tuple(unplaced), source, "ncu", device)


@dataclass(frozen=True)
class _Totals:
    """One kernel's launches summed (its dots at every level share these): the launches and their
    readings, seconds, FLOPs, FLOPs per precision, the tensor pipe's share, the metrics used and
    the precision most FLOPs were done in."""

    source: str
    kernel: str
    mine: Sequence[Launch]
    readings: Sequence[_Reading]
    seconds: float
    flops: float
    work: Dict[str, float]
    tensor: float
    union: Tuple[str, ...]
    precision: str


def _kernel(
    source: str, kernel: str, mine: Sequence[Launch], tensors: Mapping[str, Tuple[str, bool]], pipes: Sequence[str]
) -> Tuple[List[KernelDot], List[Unplaced]]:
    """One kernel's dots and unplaced levels (or the kernel itself unplaced), over its launches."""
    untimed = _untimed(kernel, mine)
    if untimed is not None:
        return [], [untimed]
    readings = [_read_launch(la, la.value(TIME), tensors, pipes) for la in mine]
    seconds = sum(r.seconds for r in readings)
    _finite(source, kernel, "time", seconds)
    union = tuple(dict.fromkeys(m for r in readings for m in r.used))
    early = _launch_lacking(kernel, mine, readings, union, seconds) or _no_flop_metrics(
        kernel, readings, union, seconds
    )
    if early is not None:
        return [], [early]
    work: Dict[str, float] = {}
    for r in readings:
        for p, f in r.work.items():
            work[p] = work.get(p, 0.0) + f
    tensor = work.pop(_TENSOR, 0.0)
    flops = sum(work.values())
    _finite(source, kernel, "FLOP count", flops, flops / seconds)
    lacks = _lacks_tensor_ops(kernel, readings, flops, bool(tensors), seconds)
    if lacks is not None:
        return [], [lacks]
    precision = max(work, key=lambda p: work[p])
    totals = _Totals(source, kernel, mine, readings, seconds, flops, work, tensor, union, precision)
    dots: List[KernelDot] = []
    unplaced: List[Unplaced] = []
    for level in ("L1", "L2", "DRAM"):
        placed = _level_dot(totals, level)
        if isinstance(placed, KernelDot):
            dots.append(placed)
        else:
            unplaced.append(placed)
    return dots, unplaced


def _untimed(kernel: str, mine: Sequence[Launch]) -> Optional[Unplaced]:
    """The kernel unplaced where a launch has no duration (or 0), else None."""
    untimed = [la.row for la in mine if not (la.has(TIME) and la.value(TIME) > 0)]
    if not untimed:
        return None
    return Unplaced(
        kernel,
        f"no duration: {TIME} is missing or 0 for launch row {untimed[0]} (the SpeedOfLight section, "
        f"or --metrics {TIME}, collects it)",
        (TIME,),
        launches=len(mine),
    )


def _launch_lacking(
    kernel: str, mine: Sequence[Launch], readings: Sequence[_Reading], union: Tuple[str, ...], seconds: float
) -> Optional[Unplaced]:
    """The kernel unplaced where a launch lacks a metric (of ``union``) its other launches have,
    else None."""
    for la, r in zip(mine, readings):
        lacking = [m for m in union if m not in r.used]
        if lacking:
            return Unplaced(
                kernel,
                f"launch row {la.row} lacks {lacking[0]}, which its other launches have (summed, it would count as 0)",
                (lacking[0],),
                seconds=seconds,
                launches=len(mine),
            )
    return None


def _no_flop_metrics(
    kernel: str, readings: Sequence[_Reading], union: Tuple[str, ...], seconds: float
) -> Optional[Unplaced]:
    """The kernel unplaced where the export has no work metric of it (``union`` empty), else None."""
    if union:
        return None
    return Unplaced(
        kernel,
        "no FLOP metrics: collect the hierarchical roofline sections (--set roofline, or --section "
        "SpeedOfLight_HierarchicalSingleRooflineChart ...) or the instruction counts "
        "(--metrics sm__sass_thread_inst_executed_op_ffma_pred_on.sum,...)",
        readings[0].missing,
        seconds=seconds,
        launches=len(readings),
    )


def _level_dot(t: _Totals, level: str) -> Union[KernelDot, Unplaced]:
    """The kernel's dot at ``level``, or that level unplaced (a launch without its bytes, or 0 bytes).

    Raises:
        ResultsError: its bytes, bandwidth or arithmetic intensity are not finite.
    """
    n = len(t.mine)
    without = [la.row for la, r in zip(t.mine, t.readings) if level not in r.level_bytes]
    if without:
        wanted = _level_wanted(LEVEL_BYTES[level])
        some = "" if len(without) == n else f" for launch row {without[0]} (its other launches have it)"
        return Unplaced(t.kernel, f"no {level} bytes: the export lacks {wanted}{some}", (wanted,), level, t.seconds, n)
    b = sum(r.level_bytes[level] for r in t.readings)
    metric = t.readings[0].level_metric[level]
    _finite(t.source, t.kernel, f"{level} byte count", b, b / t.seconds, t.flops / b if b > 0 else 0.0)
    if b <= 0:
        return Unplaced(
            t.kernel,
            f"0 bytes at {level} ({metric} = 0): no arithmetic intensity there",
            (f"{metric} (0)",),
            level,
            t.seconds,
            n,
        )
    return KernelDot(
        t.kernel,
        level,
        t.flops,
        b,
        t.seconds,
        n,
        t.precision,
        {p: f for p, f in t.work.items() if f > 0},
        "ncu",
        t.union + (metric, TIME),
        "tensor" if t.tensor > t.flops / 2 else "fma",
    )


def _lacks_tensor_ops(
    kernel: str, readings: Sequence[_Reading], flops: float, has_tensor_ops: bool, seconds: float
) -> Optional[Unplaced]:
    """The kernel unplaced when its FLOPs cannot be told (module docstring), else None."""
    n = len(readings)
    wanted = TENSOR_PREFIX + "*"
    if not has_tensor_ops:
        pipes = [r.pipe for r in readings]
        hfma = sum(r.hfma for r in readings)
        if all(p is not None for p in pipes):
            pipe = sum(p for p in pipes if p is not None)
            extra = pipe - hfma / 32.0
            if extra > 1e-3 * pipe:
                return Unplaced(
                    kernel,
                    f"lacks the tensor pipe's operations: it ran {pipe:,.0f} tensor-pipe warp instructions "
                    f"({extra:,.0f} beyond its HFMAs) that the export does not count; {TENSOR_HINT}",
                    (wanted,),
                    seconds=seconds,
                    launches=n,
                )
        elif flops <= 0:
            return Unplaced(
                kernel,
                "no floating-point instructions, and the export has neither the tensor pipe's operations nor its "
                f"instruction count, so a tensor-core kernel cannot be told from one without FLOPs; {TENSOR_HINT}",
                (wanted,),
                seconds=seconds,
                launches=n,
            )
    if flops <= 0:
        zero = ["sm__sass_thread_inst_executed_op_*_pred_on (0)"]
        zero.append(f"{wanted} (0)" if has_tensor_ops else f"{PIPE_TENSOR}.sum (0)")
        return Unplaced(
            kernel,
            "no floating-point operations: its FADD/FMUL/FFMA, DADD/DMUL/DFMA, HADD/HMUL/HFMA and tensor-pipe "
            "counts are all 0 (an integer-only kernel has no FLOPs, so no arithmetic intensity)",
            tuple(zero),
            seconds=seconds,
            launches=n,
        )
    return None


def _level_wanted(options: Sequence[Tuple[str, float, bool]]) -> str:
    """What a level lacks, in words: the sections' metric or the simple total."""
    total = next((n for n, _f, rate in options if not rate), options[-1][0])
    return options[0][0] if total == options[0][0] else f"{options[0][0]} or {total}"
