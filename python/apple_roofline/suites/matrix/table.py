"""The matrix-unit tables of a run's report: every tile shape of the ``matrix`` suite, and the best
shape of each precision and instruction beside the vendor GEMM and the theoretical peak of the same
precision, the latter also at the effective clock its best shape ran at (docs/design/clocks.md, "Clocks").

Built from the run's ``matrix`` measurements and skips (:mod:`.suite`); None
when it has neither, so the section appears only in runs that asked for the suite. OPS per tile =
ITERS · REPS · 2·M·N·K (docs/design/matrix.md, "Matrix units"); the rate is the median's, in GFLOP/s (GOP/s
for INT8, as the int8 GEMM's).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ...roofline.model.limits import CLOCK_MISREAD, Limits, classes_over_limit, flagged_cell, share_text
from ...roofline.model.run import Run
from ...study.records import Ceiling, Measurement
from ...study.table import Table
from ...text import DASH, sig_figs
from .kernels import PRECISIONS, gemm_class_of, parse_matrix_class

__all__ = ["MATRIX_SUITE", "matrix_shapes_table", "matrix_summary_table", "matrix_tables"]

#: The suite whose measurements the tables show.
MATRIX_SUITE = "matrix"


def matrix_shapes_table(run: Run) -> Optional[Table]:
    """Every tile shape: API, dtype, M, N, K, instruction, scope, GFLOP/s, valid (or skipped) and the
    validation message or skip reason. None when the run has no matrix measurement or skip."""
    ms = [m for m in run.measurements if m.suite == MATRIX_SUITE]
    skips = [s for s in run.skipped if s.suite == MATRIX_SUITE]
    if not ms and not skips:
        return None
    rows: List[Tuple[str, ...]] = []
    for m in ms:
        api = m.kernel.rsplit("_", 1)[0]
        p = m.params
        rows.append(
            (
                api,
                m.dtype,
                str(p.get("m", DASH)),
                str(p.get("n", DASH)),
                str(p.get("k", DASH)),
                str(p.get("instruction", DASH)),
                str(p.get("scope", DASH)),
                flagged_cell(m, sig_figs(m.gflops), "GFLOP/s"),
                "yes" if m.valid else "**NO**",
                DASH if m.valid else m.validation,
            )
        )
    for s in skips:
        api, _, shape = s.kernel.rpartition("_")
        dims = shape.split("x") if shape.count("x") == 2 else [DASH] * 3
        rows.append((api or s.kernel, s.dtype, *dims, DASH, DASH, DASH, "skipped", s.reason))
    header = ("API", "dtype", "M", "N", "K", "Instruction", "Scope", "GFLOP/s", "Valid", "Error or reason")
    notes = (
        "One tile product per work group (a warp, a warpgroup or a simdgroup), repeated with the operands "
        "in registers (wgmma: in shared memory) and the accumulator in registers: "
        "GFLOP/s = repetitions × 2·M·N·K × work groups / median time (GOP/s for INT8). Invalid shapes "
        "computed a wrong product and set no ceiling; skipped ones could not be built."
        + (
            " ⚠ marks a shape above its pipe's peak at the clock it ran at, with the reason: it sets no ceiling "
            '(docs/design/limits.md, "Physical limits").'
            if any(m.over_limit for m in ms)
            else ""
        ),
    )
    return Table(header, tuple(rows), "llrrrllrll", notes)


def _ceiling(run: Run, name: str, source: str) -> Optional[Ceiling]:
    return next((c for c in run.ceilings if c.name == name and c.source == source), None)


def _best_measurement(run: Run, name: str) -> Optional[Measurement]:
    """The fastest usable measurement of ceiling class ``name`` (the one that set it)."""
    ms = [m for m in run.measurements if m.usable and m.ceiling_class == name]
    return max(ms, key=lambda m: m.gflops) if ms else None


_DTYPES: Tuple[str, ...] = tuple(p.dtype for p in PRECISIONS)


def _order(name: str) -> Tuple[int, str]:
    parsed = parse_matrix_class(name)
    return (_DTYPES.index(parsed[0]) if parsed and parsed[0] in _DTYPES else len(_DTYPES), name)


def matrix_summary_table(run: Run) -> Optional[Table]:
    """Per precision and instruction: the best valid shape (the "Matrix <in>→<acc> (<instruction>)"
    ceiling), the measured vendor GEMM ceiling of the same inputs where the run has it, their ratio,
    the theoretical GEMM peak of the same inputs where known, and that peak scaled to the effective
    clock of the best shape's samples (:func:`~apple_roofline.timing.clocks.pass_clock`: measured by the
    kernel, else the SM clock sampled; the highest reading where the clock moved within the samples,
    :func:`~apple_roofline.roofline.model.limits.run_clock`; where the theoretical peak's clock is known): theoretical ×
    effective clock / maximum clock — the pipe's limit at that clock (:meth:`~.limits.Limits.limit`).
    No share is above 100 % (:func:`~.limits.share_text`). A precision whose every shape lies above
    that limit has no ceiling and is shown flagged in its place (:func:`~.limits.classes_over_limit`).
    None without a matrix ceiling or such a precision."""
    best: Dict[str, Ceiling] = {
        c.name: c for c in run.ceilings if c.source == "measured" and parse_matrix_class(c.name) is not None
    }
    over = {name: m for name, m in classes_over_limit(run.measurements).items() if parse_matrix_class(name) is not None}
    if not best and not over:
        return None
    limits = Limits.of(run.ceilings, run.device)
    rows: List[Tuple[str, ...]] = []
    for name in sorted({*best, *over}, key=_order):
        c = best.get(name)
        m = _best_measurement(run, name) if c is not None else over[name]
        value = c.value if c is not None else m.gflops if m is not None else 0.0
        parsed = parse_matrix_class(name)
        assert parsed is not None
        gemm_name = gemm_class_of(parsed[0])
        gemm = _ceiling(run, gemm_name, "measured")
        theory = limits.pipe(name)
        lim = limits.limit(m) if m is not None else None
        clocked = lim.value if lim is not None and lim.mhz is not None else None
        why = m.over_limit.reason if m is not None and m.over_limit is not None else CLOCK_MISREAD
        rows.append(
            (
                name,
                flagged_cell(m, sig_figs(value), "GFLOP/s") if m is not None else sig_figs(value),
                c.from_
                if c is not None
                else f"{m.label} m={m.params.get('m')}, n={m.params.get('n')}, k={m.params.get('k')}"
                if m is not None
                else DASH,
                f"{sig_figs(gemm.value)} ({gemm_name})" if gemm else DASH,
                f"{value / gemm.value:.2f}×" if gemm else DASH,
                f"{sig_figs(theory.value)}" if theory else DASH,
                share_text(value / theory.value, why, whole=True) if theory else DASH,
                f"{lim.mhz:g}" if lim is not None and lim.mhz is not None else DASH,
                share_text(value / clocked, why, whole=True) if clocked is not None else DASH,
            )
        )
    header = (
        "Ceiling",
        "GFLOP/s",
        "Best shape",
        "Vendor GEMM GFLOP/s",
        "Matrix / GEMM",
        "Theoretical",
        "of theoretical",
        "Effective MHz",
        "of theoretical at effective MHz",
    )
    notes = (
        "The vendor GEMM and the theoretical peak are those of the same input type (FP16 with FP32 "
        "accumulation for both FP16 pairs: cuBLAS's compute type and NVIDIA's published rate).",
        "The theoretical peak is at the device's maximum SM clock; effective MHz is the clock the best "
        "shape's timed samples ran at (measured in the kernel, %clock64 / %globaltimer; where not, the "
        "SM clock sampled: its effective_clock_source says which; where the GPU stepped its clock down "
        "within the samples, the highest reading), and the last column compares with "
        "the peak at that clock (theoretical × effective MHz / maximum clock). No share is above 100 %: a "
        "shape above its pipe at its clock (by more than the timer's tolerance) is marked ⚠ with the reason "
        'and sets no ceiling (docs/design/limits.md, "Physical limits"); a precision with no other shape is shown so.',
    )
    return Table(header, tuple(rows), "lrlrrrrrr", notes)


def matrix_tables(run: Run) -> Tuple[Table, ...]:
    """The section's tables: the summary (where the run has a matrix ceiling or a precision over its
    limit), then every tile shape; none when the run has no matrix measurement or skip."""
    shapes = matrix_shapes_table(run)
    if shapes is None:
        return ()
    summary = matrix_summary_table(run)
    return (summary, shapes) if summary is not None else (shapes,)
