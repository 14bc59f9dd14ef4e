"""Running the engines study: build the matmul models, check their accounting, time Core ML.

:func:`run_engines` builds every model of the sweep with coremltools (once, into the cache; progress
per model), checks each model's weight bytes against the kernel table, then, where Core ML can run
(macOS), for every point: the compute plan, the native path and the Python path, each validated
against NumPy before its number is reported (:mod:`.predict`). Off macOS nothing can be timed, so
the study refuses (:class:`~apple_roofline.errors.CannotMeasure`, "Core ML predictions need
macOS") before building anything, and returns no study that holds no measurement. A point Core ML
refuses is ``failed`` with Core ML's message; a study whose every point failed raises too
(docs/design/studies.md, "The engines study" and "Exit codes").
"""

from __future__ import annotations

import contextlib
import io
import logging
import platform
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import CannotMeasure, DeviceStopped, check_int, nothing_measured
from ..host import provenance
from ..study.document import finished_header
from ..study.journal import Journal
from ..study.progress import Progress, StudyInterrupted
from ..study.reader import Reader
from ..text import one_line
from ..timing.stats import CV_WARN
from .kernels import (
    DEFAULT_BATCHES,
    DEFAULT_SIZES,
    PRECISIONS,
    QUICK_BATCHES,
    QUICK_SIZES,
    UNITS,
    Shape,
    check_batches,
    parse_precisions,
    parse_shapes,
    parse_units,
    plan_points,
)
from .model import EnginePoint, EnginesStudy, PathTiming
from .models import BuiltModel, build_model, default_cache_dir, import_coremltools, model_summary
from .predict import MAX_REPS, compute_plan, native_timing, predictions_unavailable, python_timing

__all__ = [
    "DEFAULT_REPS",
    "QUICK_REPS",
    "EnginesInterrupted",
    "EnginesOptions",
    "EnginesRunner",
    "run_engines",
    "quiet_coremltools",
]

#: Predictions timed per point and path (``quick``: :data:`QUICK_REPS`).
DEFAULT_REPS = 100
QUICK_REPS = 20


class EnginesInterrupted(StudyInterrupted[EnginesStudy]):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    MESSAGE = "engines study interrupted"


@contextlib.contextmanager
def quiet_coremltools() -> Iterator[None]:
    """coremltools' progress bars (written to stderr) and its warnings that the Core ML runtime is
    absent (off macOS) kept out of the terminal; errors still raise."""
    logger = logging.getLogger("coremltools")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)


@dataclass(frozen=True)
class EnginesOptions:
    """The engines study's options, checked when built (the one place) and recorded once, as the
    study's ``params`` and its journal's options (:meth:`recorded`).

    Attributes:
        units: compute units (default all four: CPU_ONLY, CPU_AND_GPU, CPU_AND_NE, ALL).
        sizes: weights, N (square) or KxM or ``ffn`` (default N = 256 … 4096 and 2048x8192;
            ``quick``: 256 and 1024).
        batches: B values, 1 to 4096 (default 1, 4, 16, 64, 256; ``quick``: 1 and 64).
        precisions: ``fp16``, ``w8a16`` (default both).
        quick: the quick defaults above.
        reps: predictions timed per point and path, 1 to 100000 (default 100, ``quick`` 20).
        cache_dir: where models are built (default :func:`~.models.default_cache_dir`).
        python_path: also time coremltools' Python ``predict``.
        command: the command line to record.
        unit_names, shapes, batch_values, precision_names, n_reps, cache: (derived) the checked values.

    Raises:
        OptionError: a bad option (the message names the parameter and its range).
    """

    units: Optional[Union[str, Sequence[str]]] = None
    sizes: Optional[Union[str, Sequence[Union[str, int]]]] = None
    batches: Optional[Sequence[object]] = None
    precisions: Optional[Union[str, Sequence[str]]] = None
    quick: bool = False
    reps: Optional[int] = None
    cache_dir: Optional[Path] = None
    python_path: bool = True
    command: Sequence[str] = ()
    unit_names: Tuple[str, ...] = field(init=False, repr=False, compare=False)
    shapes: Tuple[Shape, ...] = field(init=False, repr=False, compare=False)
    batch_values: Tuple[int, ...] = field(init=False, repr=False, compare=False)
    precision_names: Tuple[str, ...] = field(init=False, repr=False, compare=False)
    n_reps: int = field(init=False, repr=False, compare=False)
    cache: Path = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # frozen: normalised once, here

        quick = self.quick
        put("unit_names", tuple(parse_units(self.units) if self.units is not None else UNITS))
        put(
            "shapes",
            tuple(parse_shapes(self.sizes) if self.sizes is not None else (QUICK_SIZES if quick else DEFAULT_SIZES)),
        )
        put(
            "batch_values",
            tuple(
                check_batches(list(self.batches))
                if self.batches is not None
                else (QUICK_BATCHES if quick else DEFAULT_BATCHES)
            ),
        )
        put("precision_names", tuple(parse_precisions(self.precisions) if self.precisions is not None else PRECISIONS))
        put(
            "n_reps",
            check_int(
                self.reps if self.reps is not None else (QUICK_REPS if quick else DEFAULT_REPS), "reps", 1, MAX_REPS
            ),
        )
        put("cache", Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir())
        put("command", tuple(self.command))

    def recorded(self, coremltools_version: str) -> Dict[str, Any]:
        """The study's ``params``, as its results and its journal record them."""
        return {
            "units": list(self.unit_names),
            "precisions": list(self.precision_names),
            "sizes": [s.name for s in self.shapes],
            "batches": list(self.batch_values),
            "reps": self.n_reps,
            "quick": self.quick,
            "cache_dir": str(self.cache),
            "coremltools": coremltools_version,
            "python_path": self.python_path,
            "predictions": "",
        }


class EnginesRunner:
    """One engines study of ``options``, in small steps: :meth:`run` refuses where no prediction can
    run, then builds the models (:meth:`build_models`), times every point (:meth:`measure_points`)
    and assembles the study (:meth:`assemble`) from what it holds so far."""

    def __init__(
        self, options: EnginesOptions, *, progress: Optional[Progress] = None, journal: Optional[Journal] = None
    ) -> None:
        self.options, self.progress = options, progress
        self.journal = journal or Journal()
        self.points = plan_points(options.unit_names, options.precision_names, options.shapes, options.batch_values)
        self.device = {
            "backend": "coreml",
            "name": f"Core ML on {platform.machine() or 'this machine'}",
            "os": platform.platform(),
            "predictions": "available",
        }
        self.created = ""
        self.params: Dict[str, Any] = {}
        self.built: Dict[tuple[str, Shape, int], BuiltModel] = {}
        self.results: List[EnginePoint] = []

    def run(self) -> EnginesStudy:
        """Build, check and time every point; the study.

        Raises:
            As :func:`run_engines`.
        """
        why_not = predictions_unavailable()
        # no prediction can be timed here: refuse before building anything (docs/design/files.md, "Exit codes")
        if why_not:
            raise CannotMeasure(
                f"nothing measured: {why_not}: the engines study times Core ML predictions, and "
                "none can run on this machine"
            )
        with quiet_coremltools():
            ct = import_coremltools()
        self.created = provenance.now()
        self.params = self.options.recorded(str(ct.__version__))
        self.journal.begin(
            EnginesStudy, created=self.created, device=self.device, command=self.options.command, options=self.params
        )
        try:
            self.build_models()
            self.measure_points()
        except (KeyboardInterrupt, DeviceStopped) as exc:
            raise EnginesInterrupted(self.assemble(False), exc) from None
        finally:
            self.journal.close()
        if not any(p.status == "measured" for p in self.results):
            raise nothing_measured("Core ML refused every point", [p.reason for p in self.results])
        return self.assemble(True)

    def build_models(self) -> None:
        """Build (or find in the cache) the model of every (precision, shape, batch) the points need."""
        progress = self.progress
        models_needed = list(dict.fromkeys((p.precision, p.shape, p.batch) for p in self.points))
        if progress:
            progress.start("build models", len(models_needed))
        for precision, shape, batch in models_needed:
            with quiet_coremltools():
                m = build_model(shape, batch, precision, self.options.cache)
            self.built[(precision, shape, batch)] = m
            if progress:
                progress.advance(
                    f"{precision} {shape.name} B={batch}: "
                    + ("cached" if m.cached else f"built in {m.build_s:.1f} s")
                    + ("" if m.accounting_ok else " ACCOUNTING MISMATCH")
                )
        if progress:
            progress.finish("build models")

    def measure_points(self) -> None:
        """Time every point (a point its resumed journal holds is kept, not measured)."""
        progress, journal, opts = self.progress, self.journal, self.options
        if progress:
            progress.start("predictions", len(self.points))
        for p in self.points:
            m = self.built[(p.precision, p.shape, p.batch)]
            base: Dict[str, Any] = dict(
                units=p.units,
                precision=p.precision,
                k=p.shape.k,
                m=p.shape.m,
                batch=p.batch,
                flops=p.flops,
                bytes=p.bytes,
                model=m.key,
            )
            r = journal.keep(
                p.label,
                partial(_measure, p.label, base, m, p.units, opts.n_reps, opts.python_path),
                _load_point,
                EnginePoint.to_dict,
            )
            self.results.append(r)
            if progress:
                g = r.gflops("native")
                progress.advance(
                    f"{p.label}: "
                    + (
                        "resumed"
                        if p.label in journal.resumed_keys
                        else "skipped"
                        if r.status == "skipped"
                        else f"{g:.1f} GFLOP/s"
                        if g is not None
                        else r.status + (" INVALID" if not r.valid else "")
                    )
                )
        if progress:
            progress.finish("predictions")

    def assemble(self, complete: bool) -> EnginesStudy:
        """The study of what was built and measured so far, with its warnings."""
        warns: List[str] = []
        for m in self.built.values():
            if not m.accounting_ok:
                warns.append(
                    f"model {m.key}: it holds {m.weight_bytes_in_model} weight bytes, the kernel table "
                    f"counts {model_summary(m)['weight_bytes_counted']}"
                )
        for p in self.results:
            for t in (p.native, p.python):
                if t is not None and not t.valid:
                    warns.append(f"{p.label} {t.path} failed validation: {t.validation}")
                elif t is not None and t.summary.cv > CV_WARN:
                    warns.append(f"{p.label} {t.path}: CV {t.summary.cv:.1%} > {CV_WARN:.0%} (noisy predictions)")
        return EnginesStudy(
            params=self.params,
            models=tuple(model_summary(m) for m in self.built.values()),
            points=tuple(self.results),
            warnings=tuple(warns),
            **finished_header(
                created=self.created,
                device=self.device,
                command=self.options.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )


def run_engines(
    options: Optional[EnginesOptions] = None,
    *,
    progress: Optional[Progress] = None,
    journal: Optional[Journal] = None,
) -> EnginesStudy:
    """Build, check and (on macOS) time the Core ML matmul sweep: :class:`EnginesRunner` with
    ``options`` (:class:`EnginesOptions`: the units, shapes, batches, precisions and repetitions;
    None: the defaults).

    Args:
        journal: keeps each point as it finishes (docs/design/files.md, "Journal and resume"; key its
            label, ``"ALL fp16 2048 B=64"``); a point its resumed journal holds is kept, not
            measured again.

    Raises:
        OptionError: (option ``resume``) a resumed journal of another device or other options.
            (Building ``options`` raises for a bad option, naming the parameter and its range.)
        CoremltoolsMissing: coremltools is not installed (the message names the extra).
        ModelBuildError: coremltools could not build a model (its message).
        OSError: the cache cannot be written.
        CannotMeasure: Core ML predictions cannot run here (off macOS), or Core ML refused every point.
        EnginesInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    return EnginesRunner(options or EnginesOptions(), progress=progress, journal=journal).run()


def _load_point(d: Mapping[str, Any], source: str) -> EnginePoint:
    return EnginePoint.from_dict(d, Reader(source), "record")


def _measure(label: str, base: Dict[str, Any], m: BuiltModel, units: str, reps: int, python_path: bool) -> EnginePoint:
    from .._native import _core

    try:
        plan = compute_plan(m, units)
    except _core.BackendError as exc:
        plan = {"known": False, "reason": f"the compute plan failed: {one_line(exc)}", "ops": []}
    try:
        native = native_timing(m, units, reps)
    except _core.BackendError as exc:
        return EnginePoint(**base, status="failed", reason=f"Core ML: {one_line(exc)}", plan=plan)
    python: Optional[PathTiming] = None
    reason = ""
    if python_path:
        try:
            with quiet_coremltools():
                python = python_timing(m, units, reps)
        except Exception as exc:  # noqa: BLE001 - coremltools raises many types; the point keeps its native timing
            reason = f"python path: {type(exc).__name__}: {one_line(exc)}"
    return EnginePoint(**base, status="measured", reason=reason, plan=plan, native=native, python=python)
