"""The matrix-unit tables of a run's report: every tile shape of the ``matrix`` suite, and the best
shape of each precision and instruction beside the vendor GEMM and the theoretical peak of the same
precision, the latter also at the effective clock its best shape ran at (docs/design.md, "Clocks").

Built from the run's ``matrix`` measurements and skips (:mod:`apple_roofline.suites.matrix`); None
when it has neither, so the section appears only in runs that asked for the suite. OPS per tile =
ITERS · REPS · 2·M·N·K (docs/design.md, "Matrix units"); the rate is the median's, in GFLOP/s (GOP/s
for INT8, as the int8 GEMM's).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

from ..clocks import pass_clock
from ..suites.matrix_kernels import PRECISION_BY_DTYPE, PRECISIONS, parse_matrix_class
from ..text import DASH, sig_figs
from .records import Ceiling, Measurement
from .run import Run
from .tables import Table

__all__ = ["MATRIX_SUITE", "matrix_shapes_table", "matrix_summary_table", "gemm_class_of"]

#: The suite whose measurements the tables show.
MATRIX_SUITE = "matrix"


def gemm_class_of(dtype: str) -> str:
    """The GEMM ceiling class a matrix precision stands beside: ``"fp16→fp32"`` -> ``"GEMM FP16"``
    (the vendor library's product of the same inputs; cuBLAS accumulates FP16 in FP32); both FP8
    formats -> ``"GEMM FP8"`` (the precision's :attr:`~.matrix_kernels.MatrixPrecision.gemm`)."""
    p = PRECISION_BY_DTYPE.get(dtype)
    return f"GEMM {(p.gemm if p else dtype.split('→', 1)[0]).upper()}"


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
        rows.append((api, m.dtype, str(p.get("m", DASH)), str(p.get("n", DASH)), str(p.get("k", DASH)),
                     str(p.get("instruction", DASH)), str(p.get("scope", DASH)), sig_figs(m.gflops),
                     "yes" if m.valid else "**NO**", DASH if m.valid else m.validation))
    for s in skips:
        api, _, shape = s.kernel.rpartition("_")
        dims = shape.split("x") if shape.count("x") == 2 else [DASH] * 3
        rows.append((api or s.kernel, s.dtype, *dims, DASH, DASH, DASH, "skipped", s.reason))
    header = ("API", "dtype", "M", "N", "K", "Instruction", "Scope", "GFLOP/s", "Valid", "Error or reason")
    notes = ("One tile product per work group (a warp, a warpgroup or a simdgroup), repeated with the operands "
             "in registers (wgmma: in shared memory) and the accumulator in registers: "
             "GFLOP/s = repetitions × 2·M·N·K × work groups / median time (GOP/s for INT8). Invalid shapes "
             "computed a wrong product and set no ceiling; skipped ones could not be built.",)
    return Table(header, tuple(rows), "llrrrllrll", notes)


def _ceiling(run: Run, name: str, source: str) -> Optional[Ceiling]:
    return next((c for c in run.ceilings if c.name == name and c.source == source), None)


def _best_measurement(run: Run, name: str) -> Optional[Measurement]:
    """The fastest valid measurement of ceiling class ``name`` (the one that set it)."""
    ms = [m for m in run.measurements if m.valid and m.ceiling_class == name]
    return max(ms, key=lambda m: m.gflops) if ms else None


def _positive(v: object) -> Optional[float]:
    """``v`` as a float if it is a positive number (not a bool), else None."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def _max_clock_hz(device: Mapping[str, object]) -> Optional[float]:
    """The SM clock the CUDA theoretical ceilings use (the device's ``clock_hz``, the maximum), or None."""
    return _positive(device.get("clock_hz"))


_DTYPES: Tuple[str, ...] = tuple(p.dtype for p in PRECISIONS)


def _order(name: str) -> Tuple[int, str]:
    parsed = parse_matrix_class(name)
    return (_DTYPES.index(parsed[0]) if parsed and parsed[0] in _DTYPES else len(_DTYPES), name)


def matrix_summary_table(run: Run) -> Optional[Table]:
    """Per precision and instruction: the best valid shape (the "Matrix <in>→<acc> (<instruction>)"
    ceiling), the measured vendor GEMM ceiling of the same inputs where the run has it, their ratio,
    the theoretical GEMM peak of the same inputs where known, and that peak scaled to the effective
    clock of the best shape's samples (:func:`~apple_roofline.clocks.pass_clock`: measured by the
    kernel, else the SM clock sampled; where the theoretical peak's clock, the device's ``clock_hz``,
    is known): theoretical × effective clock / clock_hz. None without a matrix ceiling."""
    best: Dict[str, Ceiling] = {c.name: c for c in run.ceilings
                                if c.source == "measured" and parse_matrix_class(c.name) is not None}
    if not best:
        return None
    max_hz = _max_clock_hz(run.device)
    rows: List[Tuple[str, ...]] = []
    for name in sorted(best, key=_order):
        c = best[name]
        parsed = parse_matrix_class(name)
        assert parsed is not None
        gemm_name = gemm_class_of(parsed[0])
        gemm = _ceiling(run, gemm_name, "measured")
        theory = _ceiling(run, gemm_name, "theoretical")
        m = _best_measurement(run, name)
        mhz = pass_clock(m.params) if m is not None else None
        clocked = theory.value * mhz * 1e6 / max_hz if theory and max_hz and mhz else None
        rows.append((name, sig_figs(c.value), c.from_,
                     f"{sig_figs(gemm.value)} ({gemm_name})" if gemm else DASH,
                     f"{c.value / gemm.value:.2f}×" if gemm else DASH,
                     f"{sig_figs(theory.value)}" if theory else DASH,
                     f"{c.value / theory.value:.0%}" if theory else DASH,
                     f"{mhz:g}" if clocked is not None else DASH,
                     f"{c.value / clocked:.0%}" if clocked is not None else DASH))
    header = ("Ceiling", "GFLOP/s", "Best shape", "Vendor GEMM GFLOP/s", "Matrix / GEMM", "Theoretical",
              "of theoretical", "Effective MHz", "of theoretical at effective MHz")
    notes = ("The vendor GEMM and the theoretical peak are those of the same input type (FP16 with FP32 "
             "accumulation for both FP16 pairs: cuBLAS's compute type and NVIDIA's published rate).",
             "The theoretical peak is at the device's maximum SM clock; effective MHz is the clock the best "
             "shape's timed samples ran at (measured in the kernel, %clock64 / %globaltimer; where not, the "
             "SM clock sampled: its effective_clock_source says which), and the last column compares with "
             "the peak at that clock (theoretical × effective MHz / maximum clock).")
    return Table(header, tuple(rows), "lrlrrrrrr", notes)
