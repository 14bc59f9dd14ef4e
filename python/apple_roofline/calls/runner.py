"""Running the per-call cost study: every matmul shape of the grid through every path of the device
(docs/design.md, "The per-call cost study").

For each path (:data:`~.paths.PATHS`) that the device's backend has, and each shape (B, N) of the
grid (:mod:`.shapes`), smallest FLOPs first:

1. prepare: inputs written, the output poisoned with NaN (:class:`~.paths.PreparedCall`);
2. warm up: calls until two consecutive ones agree within 10 % (:func:`apple_roofline.measure.warm_up`;
   a path whose every run warms up on its own, Core ML, is run once for 3 calls instead);
3. time: ``reps`` calls, each one launch and one wait (the native round-trip loop), seconds per
   call; ``reps`` is what fits the time budget (``budget_s`` at the warm-up's pace), at least
   :data:`MIN_REPS` and at most ``max_reps``;
4. validate the output of the last call (the gemm suite's check) before the measurement is kept
   as valid; one that fails is kept, marked, never fitted, and the study warns.

A path the device cannot run (cuBLAS missing, Core ML off macOS, a path of another
backend that was asked for) is skipped with its reason; when no path can run, the study raises
instead of returning an empty one (docs/design.md, "Exit codes"). Statistics are the per-call distribution
(:func:`apple_roofline.stats.summarize`: median, p10, p90); fits and crossovers are derived by the
model (:mod:`.fit`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence

from .. import provenance
from ..devices import default_device, open_device
from ..errors import DeviceStopped, OptionError, check_int, nothing_measured
from ..measure import warm_up
from ..study.document import ToolInfo
from ..study.journal import Journal, record_key
from ..study.progress import Progress, StudyInterrupted
from ..suites.gemm.suite import gemm_bytes, gemm_flops
from .model import CallMeasurement, CallPathInfo, CallsStudy, PathSkipped
from .paths import PATHS, PathContext, check_paths
from .shapes import grid

__all__ = [
    "MIN_REPS",
    "DEFAULT_MAX_REPS",
    "MAX_REPS",
    "DEFAULT_BUDGET_S",
    "QUICK_BUDGET_S",
    "CallsInterrupted",
    "check_max_reps",
    "run_calls",
]

#: Fewest timed calls per shape (docs/design.md, "Measurement": at least 10 samples).
MIN_REPS = 10
#: Most timed calls per shape, by default, and the largest ``max_reps`` accepted.
DEFAULT_MAX_REPS = 200
MAX_REPS = 10_000
#: Seconds of timed calls per shape aimed at (a shape slower than budget_s / MIN_REPS takes longer).
DEFAULT_BUDGET_S = 0.25
QUICK_BUDGET_S = 0.05


class CallsInterrupted(StudyInterrupted[CallsStudy]):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    MESSAGE = "per-call cost study interrupted"


def check_max_reps(max_reps: object) -> int:
    """``max_reps`` checked: :data:`MIN_REPS` to :data:`MAX_REPS`.

    Raises:
        OptionError: naming ``max_reps`` and the range.
    """
    return check_int(max_reps, "max_reps", MIN_REPS, MAX_REPS)


def _reps_for(per_call_s: float, budget_s: float, max_reps: int) -> int:
    return int(min(max_reps, max(MIN_REPS, math.ceil(budget_s / max(per_call_s, 1e-9)))))


def run_calls(
    device: Optional[str] = None,
    *,
    paths: Optional[Sequence[str]] = None,
    quick: bool = False,
    batches: Optional[Sequence[int]] = None,
    sizes: Optional[Sequence[int]] = None,
    max_reps: int = DEFAULT_MAX_REPS,
    budget_s: Optional[float] = None,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
    open_backend: Callable[[str], Any] = open_device,
    core: Any = None,
    journal: Optional[Journal] = None,
) -> CallsStudy:
    """Measure the per-call cost of C[B×N] = A[B×N]·W[N×N] (fp32) through every path of ``device``
    ("cpu", "cuda:0", "metal:0"; default: the best available) and return the :class:`~.model.CallsStudy`.

    Args:
        paths: path names (:data:`~.paths.PATHS`); default every path of the device's backend.
        quick: the quick grid (:data:`~.shapes.QUICK_BATCHES` × :data:`~.shapes.QUICK_SIZES`) and a
            shorter time budget.
        batches, sizes: the grid's B (1 to 256) and N (multiples of 16, 16 to 2048) instead of the default.
        max_reps: most timed calls per shape (10 to 10000).
        budget_s: seconds of timed calls per shape (default 0.25, quick 0.05).
        progress: receives ``start("calls", total)``, ``advance(description)``, ``finish("calls")``.
        command: the command line to record.
        open_backend, core: how the device is opened and the extension module (tests pass fakes).
        journal: keeps each measurement as it finishes (docs/design.md, "Journal and resume"; key
            ``"PATH BxN"``); one its resumed journal holds is kept, not measured again.

    Raises:
        OptionError: an unknown path, B or N out of range, ``max_reps`` or ``budget_s`` out of range,
            a malformed device name (each naming the parameter and the valid values); paths named
            that all run on another backend than the device's (``cublas`` on the CPU); (option
            ``resume``) a resumed journal of another device or other options.
        CannotMeasure: no path can run here (each missing from this build, or unsupported by the
            device at every shape): nothing was measured; the message gives the reasons.
        _core.BackendError: the device failed.
        CallsInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    names = check_paths(paths) if paths is not None else tuple(PATHS)
    shapes = grid(quick, batches, sizes)
    max_reps = check_max_reps(max_reps)
    budget = (QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S) if budget_s is None else float(budget_s)
    if not (0.0 < budget <= 60.0):
        raise OptionError("budget_s", budget_s, "above 0 to 60 seconds")
    if core is None:
        from .._native import _core as core
    dev = device or default_device()
    backend = open_backend(dev)
    info = dict(backend.info())
    name = str(info["backend"])
    device_str = f"{name}:{int(info.get('index', 0) or 0)}" if name != "cpu" else "cpu"
    ctx = PathContext(core=core, backend=backend, backend_name=name, device=device_str)
    created = provenance.now()
    params = {
        "batches": sorted({b for b, _n in shapes}),
        "sizes": sorted({n for _b, n in shapes}),
        "quick": quick,
        "budget_s": budget,
        "min_reps": MIN_REPS,
        "max_reps": max_reps,
        "dtype": "fp32",
        "paths": list(names),
    }
    journal = journal or Journal()
    journal.begin(CallsStudy, created=created, device=info, command=command, options=params)
    infos: List[CallPathInfo] = []
    measured: List[CallMeasurement] = []
    skipped: List[PathSkipped] = []

    def assemble(complete: bool) -> CallsStudy:
        warns = [f"{m.path} {m.shape} failed validation: {m.validation}" for m in measured if not m.valid]
        return CallsStudy(
            tool=ToolInfo.current(),
            created=created,
            finished=provenance.now(),
            host=provenance.host(),
            device=info,
            command=tuple(command),
            params=params,
            paths=tuple(infos),
            measurements=tuple(measured),
            skipped=tuple(skipped),
            warnings=tuple(warns),
            complete=complete,
            resumed=journal.resumed(),
        )

    runnable = []
    for p in (PATHS[n] for n in names):
        if name not in p.backends:
            if paths is not None:  # asked for by name: say why not
                skipped.append(PathSkipped(p.name, f"runs on {', '.join(p.backends)}; this device is {name}"))
        elif p.prepare is None:
            skipped.append(PathSkipped(p.name, p.unavailable))
        else:
            runnable.append(p)
    if not runnable:  # nothing can be measured: say why, and return no empty study
        of_backend = [p for p in PATHS.values() if name in p.backends]
        if paths is not None and all(name not in PATHS[s.path].backends for s in skipped):
            raise OptionError(
                "paths",
                ",".join(names),
                f"paths of a {name} device: {', '.join(p.name for p in of_backend)}",
                problem="cannot run on this device",
                shown=",".join(names),
                reason=f"{device_str} ({info.get('name', name)}) is a {name} device",
            )
        raise nothing_measured(f"no path of the per-call study can run on {device_str}", [s.reason for s in skipped])
    if progress:
        progress.start("calls", len(runnable) * len(shapes))
    try:
        for p in runnable:
            prepare = p.prepare
            assert prepare is not None
            try:
                info_p = CallPathInfo(p.name, p.label(ctx), p.call, p.runs_on(ctx))
            except core.UnsupportedError as exc:
                skipped.append(PathSkipped(p.name, str(exc)))
                continue
            added = False
            for b, n in shapes:
                key = record_key(p.name, f"{b}x{n}")
                stored = journal.stored(key)
                if stored is None:
                    try:
                        prep = prepare(ctx, b, n)
                    except core.UnsupportedError as exc:
                        skipped.append(PathSkipped(p.name if not added else f"{p.name} {b}×{n}²", str(exc)))
                        if progress:
                            progress.advance(f"{p.name} {b}×{n}²: skipped")
                        if not added:
                            break
                        continue
                if not added:
                    infos.append(info_p)
                    added = True
                if stored is not None:
                    m = CallMeasurement.from_dict(stored, source=str(journal.path), where=key)
                else:
                    m = _measure(prep, p.name, p.dtype, b, n, budget, max_reps)
                    journal.record(key, m.to_dict())
                measured.append(m)
                if progress:
                    mark = "" if m.valid else " INVALID"
                    progress.advance(
                        f"{p.name} {m.shape}: "
                        + ("resumed" if stored is not None else f"{m.distribution.median * 1e6:.3g} µs{mark}")
                    )
    except (KeyboardInterrupt, DeviceStopped) as exc:
        raise CallsInterrupted(assemble(False), exc) from None
    finally:
        journal.close()
    if progress:
        progress.finish("calls")
    if not measured:
        raise nothing_measured(
            f"every path of the per-call study was skipped on {device_str}", [s.reason for s in skipped]
        )
    return assemble(True)


def _measure(prep: Any, path: str, dtype: str, b: int, n: int, budget: float, max_reps: int) -> CallMeasurement:
    """Warm up, time and validate one prepared shape (steps 2 to 4 of the module docstring)."""
    # A path that warms up inside each run (Core ML reloads its model per run) is run once to size
    # the samples; warm_up's one-call steps would each reload it.
    warm = prep.run(3) if prep.warms_up else warm_up(prep.run)
    samples = prep.run(_reps_for(min(warm[-3:]), budget, max_reps))
    ok, why = prep.check()
    return CallMeasurement(
        path,
        b,
        n,
        gemm_flops(b, n, n),
        gemm_bytes(b, n, n, dtype),
        tuple(samples),
        rows=prep.rows,
        valid=ok,
        validation=why,
    )
