"""Running the per-call cost study: every matmul shape of the grid through every path of the device
(docs/design/studies.md, "The per-call cost study").

For each path (:data:`~.paths.PATHS`) that the device's backend has, and each shape (B, N) of the
grid (:mod:`.shapes`), smallest FLOPs first:

1. prepare: inputs written, the output poisoned with NaN (:class:`~.paths.PreparedCall`);
2. warm up: calls until two consecutive ones agree within 10 % (:func:`apple_roofline.timing.measure.warm_up`;
   a path whose every run warms up on its own, Core ML, is run once for 3 calls instead);
3. time: ``reps`` calls, each one launch and one wait (the native round-trip loop), seconds per
   call; ``reps`` is what fits the time budget (``budget_s`` at the warm-up's pace), at least
   :data:`MIN_REPS` and at most ``max_reps``;
4. validate the output of the last call (the gemm suite's check) before the measurement is kept
   as valid; one that fails is kept, marked, never fitted, and the study warns.

A path the device cannot run (cuBLAS missing, Core ML off macOS, a path of another
backend that was asked for) is skipped with its reason; when no path can run, the study raises
instead of returning an empty one (docs/design/files.md, "Exit codes"). Statistics are the per-call distribution
(:func:`apple_roofline.timing.stats.summarize`: median, p10, p90); fits and crossovers are derived by the
model (:mod:`.fit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..devices import default_device, open_device
from ..errors import DeviceStopped, OptionError, check_int, nothing_measured
from ..host import provenance
from ..study.document import finished_header
from ..study.journal import Journal, record_key
from ..study.progress import Progress, StudyInterrupted
from ..suites.gemm.precisions import gemm_bytes, gemm_flops
from ..timing.measure import warm_up
from .model import CallMeasurement, CallPathInfo, CallsStudy, PathSkipped
from .paths import PATHS, CallPath, PathContext, check_paths
from .shapes import grid

__all__ = [
    "MIN_REPS",
    "DEFAULT_MAX_REPS",
    "MAX_REPS",
    "DEFAULT_BUDGET_S",
    "QUICK_BUDGET_S",
    "CallsInterrupted",
    "CallsOptions",
    "CallsRunner",
    "check_max_reps",
    "run_calls",
]

#: Fewest timed calls per shape (docs/design/measurement.md, "Measurement": at least 10 samples).
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


@dataclass(frozen=True)
class CallsOptions:
    """The per-call study's options, checked when built (the one place) and recorded once, as the
    study's ``params`` and its journal's options (:meth:`recorded`).

    Attributes:
        paths: path names (:data:`~.paths.PATHS`); None: every path of the device's backend.
        quick: the quick grid and a shorter time budget.
        batches, sizes: the grid's B and N instead of the default (:func:`~.shapes.grid`).
        max_reps: most timed calls per shape, :data:`MIN_REPS` to :data:`MAX_REPS`.
        budget_s: seconds of timed calls per shape, above 0 to 60; None: :data:`DEFAULT_BUDGET_S`
            (:data:`QUICK_BUDGET_S` with ``quick``).
        command: the command line to record.
        names, shapes, budget: (derived) the paths in registry order, the (B, N) shapes smallest
            first, and the seconds per shape.

    Raises:
        OptionError: an unknown path, B or N out of range, ``max_reps`` or ``budget_s`` out of range.
    """

    paths: Optional[Sequence[str]] = None
    quick: bool = False
    batches: Optional[Sequence[int]] = None
    sizes: Optional[Sequence[int]] = None
    max_reps: int = DEFAULT_MAX_REPS
    budget_s: Optional[float] = None
    command: Sequence[str] = ()
    names: Tuple[str, ...] = field(init=False, repr=False, compare=False)
    shapes: Tuple[Tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    budget: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # frozen: normalised once, here

        put("names", check_paths(self.paths) if self.paths is not None else tuple(PATHS))
        put("shapes", tuple(grid(self.quick, self.batches, self.sizes)))
        put("max_reps", check_max_reps(self.max_reps))
        budget = (QUICK_BUDGET_S if self.quick else DEFAULT_BUDGET_S) if self.budget_s is None else float(self.budget_s)
        if not (0.0 < budget <= 60.0):
            raise OptionError("budget_s", self.budget_s, "above 0 to 60 seconds")
        put("budget", budget)
        put("command", tuple(self.command))

    def recorded(self) -> Dict[str, Any]:
        """The study's ``params``, as its results and its journal record them."""
        return {
            "batches": sorted({b for b, _n in self.shapes}),
            "sizes": sorted({n for _b, n in self.shapes}),
            "quick": self.quick,
            "budget_s": self.budget,
            "min_reps": MIN_REPS,
            "max_reps": self.max_reps,
            "dtype": "fp32",
            "paths": list(self.names),
        }


class CallsRunner:
    """One per-call study of ``options`` on ``device``, in small steps: the device opened when
    built, then :meth:`run` finds the runnable paths (:meth:`runnable`), measures each
    (:meth:`measure_path`) and assembles the study (:meth:`assemble`) from what it holds so far.
    ``open_backend`` and ``core`` are how the device is opened and the extension module (tests pass
    fakes)."""

    def __init__(
        self,
        device: Optional[str],
        options: CallsOptions,
        *,
        progress: Optional[Progress] = None,
        open_backend: Callable[[str], Any] = open_device,
        core: Any = None,
        journal: Optional[Journal] = None,
    ) -> None:
        if core is None:
            from .._native import _core as core
        self.options, self.progress, self.core = options, progress, core
        backend = open_backend(device or default_device())
        self.info: Dict[str, Any] = dict(backend.info())
        self.backend_name = name = str(self.info["backend"])
        self.device = f"{name}:{int(self.info.get('index', 0) or 0)}" if name != "cpu" else "cpu"
        self.ctx = PathContext(core=core, backend=backend, backend_name=name, device=self.device)
        self.created = provenance.now()
        self.journal = journal or Journal()
        self.infos: List[CallPathInfo] = []
        self.measured: List[CallMeasurement] = []
        self.skipped: List[PathSkipped] = []

    def run(self) -> CallsStudy:
        """Measure every runnable path at every shape and return the study.

        Raises:
            OptionError, CannotMeasure, _core.BackendError, CallsInterrupted: as :func:`run_calls`.
        """
        self.journal.begin(
            CallsStudy,
            created=self.created,
            device=self.info,
            command=self.options.command,
            options=self.options.recorded(),
        )
        runnable = self.runnable()
        if self.progress:
            self.progress.start("calls", len(runnable) * len(self.options.shapes))
        try:
            for p in runnable:
                self.measure_path(p)
        except (KeyboardInterrupt, DeviceStopped) as exc:
            raise CallsInterrupted(self.assemble(False), exc) from None
        finally:
            self.journal.close()
        if self.progress:
            self.progress.finish("calls")
        if not self.measured:
            raise nothing_measured(
                f"every path of the per-call study was skipped on {self.device}", [s.reason for s in self.skipped]
            )
        return self.assemble(True)

    def runnable(self) -> List[CallPath]:
        """The paths of the options this device can run; the others skipped with why (a path of
        another backend only where asked for by name).

        Raises:
            OptionError: (option ``paths``) every path named runs on another backend.
            CannotMeasure: no path can run here.
        """
        name, named = self.backend_name, self.options.paths is not None
        runnable = []
        for p in (PATHS[n] for n in self.options.names):
            if name not in p.backends:
                if named:  # asked for by name: say why not
                    self.skipped.append(PathSkipped(p.name, f"runs on {', '.join(p.backends)}; this device is {name}"))
            elif p.prepare is None:
                self.skipped.append(PathSkipped(p.name, p.unavailable))
            else:
                runnable.append(p)
        if runnable:
            return runnable
        # nothing can be measured: say why, and return no empty study
        if named and all(name not in PATHS[s.path].backends for s in self.skipped):
            of_backend = ", ".join(p.name for p in PATHS.values() if name in p.backends)
            names = ",".join(self.options.names)
            raise OptionError(
                "paths",
                names,
                f"paths of a {name} device: {of_backend}",
                problem="cannot run on this device",
                shown=names,
                reason=f"{self.device} ({self.info.get('name', name)}) is a {name} device",
            )
        raise nothing_measured(
            f"no path of the per-call study can run on {self.device}", [s.reason for s in self.skipped]
        )

    def measure_path(self, p: CallPath) -> None:
        """Every shape of the options through path ``p``, in order; a path unsupported at its first
        shape is skipped whole, one unsupported at a later shape skips that shape. A shape its
        resumed journal holds is kept, not measured."""
        prepare = p.prepare
        assert prepare is not None
        try:
            info_p = CallPathInfo(p.name, p.label(self.ctx), p.call, p.runs_on(self.ctx))
        except self.core.UnsupportedError as exc:
            self.skipped.append(PathSkipped(p.name, str(exc)))
            return
        added = False
        for b, n in self.options.shapes:
            key = record_key(p.name, f"{b}x{n}")
            stored = self.journal.stored(key)
            if stored is None:
                try:
                    prep = prepare(self.ctx, b, n)
                except self.core.UnsupportedError as exc:
                    self.skipped.append(PathSkipped(p.name if not added else f"{p.name} {b}×{n}²", str(exc)))
                    self._advance(f"{p.name} {b}×{n}²: skipped")
                    if not added:
                        return
                    continue
            if not added:
                self.infos.append(info_p)
                added = True
            if stored is not None:
                m = CallMeasurement.from_dict(stored, source=str(self.journal.path), where=key)
            else:
                m = _measure(prep, p.name, p.dtype, b, n, self.options.budget, self.options.max_reps)
                self.journal.record(key, m.to_dict())
            self.measured.append(m)
            self._advance(
                f"{p.name} {m.shape}: "
                + (
                    "resumed"
                    if stored is not None
                    else f"{m.distribution.median * 1e6:.3g} µs" + ("" if m.valid else " INVALID")
                )
            )

    def _advance(self, words: str) -> None:
        if self.progress:
            self.progress.advance(words)

    def assemble(self, complete: bool) -> CallsStudy:
        """The study of what was measured so far."""
        warns = [f"{m.path} {m.shape} failed validation: {m.validation}" for m in self.measured if not m.valid]
        return CallsStudy(
            params=self.options.recorded(),
            paths=tuple(self.infos),
            measurements=tuple(self.measured),
            skipped=tuple(self.skipped),
            warnings=tuple(warns),
            **finished_header(
                created=self.created,
                device=self.info,
                command=self.options.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )


def run_calls(
    device: Optional[str] = None,
    options: Optional[CallsOptions] = None,
    *,
    progress: Optional[Progress] = None,
    open_backend: Callable[[str], Any] = open_device,
    core: Any = None,
    journal: Optional[Journal] = None,
) -> CallsStudy:
    """Measure the per-call cost of C[B×N] = A[B×N]·W[N×N] (fp32) through every path of ``device``
    ("cpu", "cuda:0", "metal:0"; default: the best available) and return the :class:`~.model.CallsStudy`:
    :class:`CallsRunner` with ``options`` (:class:`CallsOptions`: the paths, the grid, the repetitions
    and the time budget; None: the defaults).

    Args:
        progress: receives ``start("calls", total)``, ``advance(description)``, ``finish("calls")``.
        open_backend, core: how the device is opened and the extension module (tests pass fakes).
        journal: keeps each measurement as it finishes (docs/design/files.md, "Journal and resume"; key
            ``"PATH BxN"``); one its resumed journal holds is kept, not measured again.

    Raises:
        OptionError: a malformed device name; paths named that all run on another backend than the
            device's (``cublas`` on the CPU); (option ``resume``) a resumed journal of another device or
            other options. (Building ``options`` raises for an unknown path, B or N out of range,
            ``max_reps`` or ``budget_s`` out of range, each naming the parameter and the valid values.)
        CannotMeasure: no path can run here (each missing from this build, or unsupported by the
            device at every shape): nothing was measured; the message gives the reasons.
        _core.BackendError: the device failed.
        CallsInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    return CallsRunner(
        device, options or CallsOptions(), progress=progress, open_backend=open_backend, core=core, journal=journal
    ).run()


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
