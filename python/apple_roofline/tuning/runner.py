"""Tunes the threadgroup / block size of the suites' kernels on one device (docs/design/studies.md,
"Threadgroup-size tuning", after the threadgroup-size methodology of Apple's GPU optimization guide:
multiples of the SIMD width up to the pipeline's maximum, measured, not guessed).

Each suite plans its cases once, at the first candidate size (``SuiteContext.options``,
:data:`~apple_roofline.suites.base.BLOCKS_OPTION`), and every case is rebound to each further size
(:meth:`~apple_roofline.suites.base.Case.for_block`): the same buffers, inputs and NumPy reference,
only the kernel built at that BLOCK, and the launch re-sized where it depends on the block (the
peak and idiv suites' whole waves, from the occupancy calculator). Before every size's timing the
case's output is poisoned again (``Case.reset``), so each point is validated on its own output
(:func:`~apple_roofline.roofline.run.cases.time_case`, then :func:`~apple_roofline.roofline.run.cases.judge`).
:func:`run_tune` is the ``tune`` study;
:class:`QuickTuner` and :class:`FileTuner` give ``run --tune`` a size per kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ..devices import DeviceSpec, open_device, resolve_device
from ..errors import DeviceStopped, OptionError, nothing_measured
from ..host import provenance
from ..roofline.run.cases import judge, time_case
from ..roofline.run.options import (
    MIN_ARRAY_BYTES,
    check_array_bytes,
    default_array_bytes,
    dram_array_bytes,
    parse_suites,
)
from ..study.document import finished_header
from ..study.journal import Journal, record_key
from ..study.progress import Progress, StudyInterrupted
from ..study.records import BLOCK_PARAM, Measurement, ParamValue, Skipped
from ..suites import SuiteContext, registry
from ..suites.base import ANY_KERNEL, BLOCKS_OPTION, TUNE_OPTION, kernel_key
from ..text import one_line, sig_figs
from ..timing.measure import DEFAULT_REPS, check_reps
from ..timing.stats import CV_WARN
from .model import Rejected, TuneStudy, best_blocks, candidates, check_blocks, device_block_limit, rate, rate_unit

__all__ = [
    "TUNE_SUITES",
    "TuneInterrupted",
    "TuneOptions",
    "TuneRunner",
    "TunePoints",
    "PointTiming",
    "parse_tune_suites",
    "probe_suite",
    "tune_suite",
    "run_tune",
    "QuickTuner",
    "FileTuner",
]

#: The block size kernels are first built at to read the device's SIMD width: the smallest the
#: backends accept (core/checks.h), which no pipeline rejects.
PROBE_BLOCK = 32

#: The suites whose kernels have a block size to tune (GEMM routines choose their own).
TUNE_SUITES: Tuple[str, ...] = ("stream", "sweep", "peak", "idiv")


class TuneInterrupted(StudyInterrupted[TuneStudy]):
    """Raised when tuning was interrupted (Ctrl-C); ``partial`` holds what was measured so far, with
    ``complete=False``."""

    MESSAGE = "tuning interrupted"


def parse_tune_suites(text: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """``"stream,peak"`` as ``("stream", "peak")`` in :data:`TUNE_SUITES` order
    (:func:`~apple_roofline.roofline.run.options.parse_suites` over :data:`TUNE_SUITES`).

    Raises:
        OptionError: (option ``suites``) an unknown suite or none; the message names the valid ones.
    """
    return parse_suites(text, TUNE_SUITES, "is not a suite with a block size to tune")


def _context(ctx: SuiteContext, block: Optional[int]) -> SuiteContext:
    options: Dict[str, Any] = {**ctx.options, TUNE_OPTION: True}
    if block is not None:
        options[BLOCKS_OPTION] = {ANY_KERNEL: block}
    return dataclasses.replace(ctx, options=options)


def probe_suite(ctx: SuiteContext, name: str) -> Optional[Tuple[int, int]]:
    """``(simd_width, max_block)`` of the first kernel of suite ``name`` that builds at its table's
    block size, else at the smallest every GPU backend accepts (:data:`PROBE_BLOCK`)
    (``Kernel.simd_width``, ``Kernel.max_block``), or None when none does. A SIMD width of 0 means
    the device has no threadgroup (the CPU, whose kernels take no BLOCK). The suite is planned on
    the smallest arrays (:data:`~apple_roofline.roofline.run.options.MIN_ARRAY_BYTES`): only its kernels
    are built."""
    from .._native import _core

    small = dataclasses.replace(ctx, array_bytes=MIN_ARRAY_BYTES)  # kernels do not depend on it
    for block in (None, PROBE_BLOCK):
        try:
            for case in registry.spec(name).measure(_context(small, block)).cases():
                try:
                    kernel = case.make_kernel()
                except (_core.BackendError, ValueError):
                    continue
                return int(getattr(kernel, "simd_width", 0) or 0), int(getattr(kernel, "max_block", 0) or 0)
        except ValueError:  # a suite that builds kernels while planning (whole waves) met a rejected BLOCK
            continue
    return None


def _occupancy(kernel: Any, block: int, compute_units: int) -> Dict[str, ParamValue]:
    """``wave_items`` and the resident blocks and threads per SM it implies (the occupancy
    calculator's, CUDA: wave_items = SMs × resident blocks per SM × block), where known."""
    wave = int(getattr(kernel, "wave_items", 0) or 0)
    if not wave or not compute_units:
        return {}
    per_sm = wave // (block * compute_units)
    return {"wave_items": wave, "resident_blocks_per_sm": per_sm, "resident_threads_per_sm": per_sm * block}


@dataclass
class TunePoints:
    """What tuning finds, appended to as each point ends: the measured points (each with ``block``
    and the occupancy parameters), the sizes the compiler or the pipeline rejected (with its
    message) and the kernels the device cannot run at any size."""

    measurements: List[Measurement] = field(default_factory=list)
    rejected: List[Rejected] = field(default_factory=list)
    skipped: List[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class PointTiming:
    """How each point is timed: ``reps`` samples after at most ``max_warmup_s`` seconds of warm-up
    (:func:`~apple_roofline.roofline.run.cases.time_case`)."""

    reps: int
    max_warmup_s: float


def tune_suite(
    ctx: SuiteContext,
    name: str,
    blocks: Sequence[int],
    found: TunePoints,
    timing: PointTiming,
    *,
    kernels: Optional[Set[str]] = None,
    progress: Optional[Progress] = None,
    journal: Optional[Journal] = None,
) -> None:
    """Measure every kernel of suite ``name`` (only those ``kernels`` names, by kernel name or
    ``"suite/kernel/dtype"``, when given) at every size of ``blocks``, timed as ``timing`` says,
    appending to ``found``. ``progress`` sees the suite as one task, ``"tune NAME"``, of one step
    per kernel and size. ``journal`` gets each point as it finishes; a point its resumed journal
    holds is taken from it, not measured (docs/design/files.md, "Journal and resume")."""
    from .._native import _core

    journal = journal or Journal()
    suite = registry.spec(name).measure(_context(ctx, blocks[0] if blocks else None))
    if progress:
        progress.start(f"tune {name}", suite.total() * len(blocks))
    tuner = _KernelTuner(_core, ctx, suite, found, timing, progress, journal)
    for planned in suite.cases() if blocks else ():
        k = planned.kernel
        label = kernel_key(k)
        if kernels and k.name not in kernels and label not in kernels:
            continue
        tuner.tune(planned, label, blocks)
    if progress:
        progress.finish(f"tune {name}")


class _KernelTuner:
    """One suite's kernels, each at every size (:func:`tune_suite`): ``core`` is the extension, whose
    errors tell a size rejected from a kernel the device cannot run."""

    def __init__(
        self,
        core: Any,
        ctx: SuiteContext,
        suite: Any,
        found: TunePoints,
        timing: PointTiming,
        progress: Optional[Progress],
        journal: Journal,
    ) -> None:
        self.core, self.suite, self.found, self.timing = core, suite, found, timing
        self.progress, self.journal = progress, journal
        self.compute_units = int(ctx.info.get("compute_units", 0) or 0)

    def advance(self, text: str) -> None:
        """One step of the suite's progress."""
        if self.progress:
            self.progress.advance(text)

    def tune(self, planned: Any, label: str, blocks: Sequence[int]) -> None:
        """The planned case ``planned`` (kernel ``label``) at each size: resumed from the journal,
        rejected, or measured; a kernel the device cannot run ends at its first size that says so."""
        k = planned.kernel
        for i, block in enumerate(blocks):
            what = f"{label} block={block}"
            key = record_key(label, f"block={block}", params=planned.params)
            if self.resumed(key, what):
                continue
            try:
                case = planned if i == 0 else planned.for_block(block)
                kernel = case.make_kernel()
            except self.core.UnsupportedError as exc:  # the kernel, not the size: no other size can run
                self.found.skipped.append(Skipped(k.suite, k.name, k.dtype, str(exc)))
                self.advance(f"{label}: unsupported")
                break
            except (self.core.CompileError, ValueError) as exc:
                self.found.rejected.append(Rejected(k.suite, k.name, k.dtype, block, one_line(exc)))
                self.advance(f"{what}: rejected")
                continue
            self.measure(case, kernel, block, key, what)

    def resumed(self, key: str, what: str) -> bool:
        """Whether the resumed journal holds the point ``key``; if so, it is kept."""
        stored = self.journal.stored(key)
        if stored is None:
            return False
        m = Measurement.from_dict(stored, source=str(self.journal.path), where=key)
        self.found.measurements.append(m)
        self.suite.record(m)
        self.advance(f"{what}: resumed")
        return True

    def measure(self, case: Any, kernel: Any, block: int, key: str, what: str) -> None:
        """Time and check ``kernel`` at ``block`` on its own poisoned output; kept by the journal."""
        extra = _occupancy(kernel, block, self.compute_units)
        if not int(getattr(kernel, "block", 0) or 0):
            extra[BLOCK_PARAM] = block
        case.reset()  # this size's output alone is checked, never an earlier size's
        t = self.timing
        m = judge(case, time_case(case, kernel, reps=t.reps, max_warmup_s=t.max_warmup_s, extra=extra), case.check())
        self.journal.record(key, m.to_dict())
        self.found.measurements.append(m)
        self.suite.record(m)
        self.advance(f"{what}: {sig_figs(rate(m))} {rate_unit(m)}" + ("" if m.valid else " INVALID"))


def _limits(ctx: SuiteContext, suite_names: Sequence[str], device: str) -> Tuple[int, int]:
    """``(simd_width, limit)`` of the device: the first suite kernel's SIMD width and the device's
    block limit (:func:`~.model.device_block_limit`, else that kernel's ``max_block``).

    Raises:
        OptionError: (option ``device``) the device has no threadgroup size (the CPU).
    """
    for name in suite_names:
        probed = probe_suite(ctx, name)
        if probed is None:
            continue
        simd, max_block = probed
        if simd <= 0:
            break
        return simd, device_block_limit(ctx.info) or max_block
    raise OptionError(
        "device",
        device,
        "a GPU: cuda:N or metal:N",
        shown=device,
        problem="has no threadgroup size to tune",
        reason="its kernels run as chunks of work items on a thread pool",
    )


def run_tune(
    device: Union[str, DeviceSpec, None] = None,
    options: Optional[TuneOptions] = None,
    *,
    progress: Optional[Progress] = None,
    journal: Optional[Journal] = None,
) -> TuneStudy:
    """Tune the block size of the kernels of ``options.suites`` (default :data:`TUNE_SUITES`) on
    ``device`` ("cuda:0", "metal:0" or a DeviceSpec) and return the study (:class:`~.model.TuneStudy`):
    :class:`TuneRunner` with ``options`` (:class:`TuneOptions`; None: the defaults).

    ``journal`` keeps each point as it finishes (docs/design/files.md, "Journal and resume"); a point
    its resumed journal holds is kept, not measured again.

    Raises:
        OptionError: (a ValueError) before anything is timed: a malformed or unavailable device, one
            without a threadgroup size (the CPU), ``array_bytes`` out of range, a size that is not a
            multiple of the SIMD width or above the device's limit (the message names the range), a
            kernel name no suite has; (option ``resume``) a resumed journal of another device or other
            options. (Building ``options`` raises for an unknown suite or ``reps`` outside 1 to 10000.)
        CannotMeasure: no point was timed (every size rejected, every kernel unsupported).
        _core.BackendError: subclasses, for device failures.
        TuneInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    return TuneRunner(device, options or TuneOptions(), progress=progress, journal=journal).run()


@dataclass(frozen=True)
class TuneOptions:
    """The tuning study's options, checked when built (the one place; the block sizes and the array
    size, whose ranges depend on the device, by :meth:`sizes_for` and :meth:`array_bytes_for`) and
    recorded once, as the study's ``params`` and its journal's options (:meth:`recorded`).

    Attributes:
        suites: the suites to tune (default :data:`TUNE_SUITES`).
        kernels: restricts the kernels (names such as ``triad`` or ``peak/vec4_indep4/fp16``).
        blocks: the sizes to try (default: every multiple of the SIMD width up to the device's limit,
            or with ``quick`` the SIMD width times powers of two).
        quick: those sizes, and a shorter warm-up.
        reps: samples per point.
        array_bytes: the STREAM / sweep array size (default: a run's,
            :func:`~apple_roofline.roofline.run.options.default_array_bytes`; with ``quick``, the
            smallest that still measures DRAM, :func:`~apple_roofline.roofline.run.options.dram_array_bytes`:
            4× the last-level cache where it is known).
        command: the command line to record.
        suite_names, wanted: (derived) the suites and the kernel names, checked.

    Raises:
        OptionError: an unknown suite, ``reps`` outside 1 to 10000.
    """

    suites: Optional[Sequence[str]] = None
    kernels: Optional[Sequence[str]] = None
    blocks: Optional[Sequence[object]] = None
    quick: bool = False
    reps: int = DEFAULT_REPS
    array_bytes: Optional[int] = None
    command: Sequence[str] = ()
    suite_names: Tuple[str, ...] = field(init=False, repr=False, compare=False)
    wanted: Set[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # frozen: normalised once, here

        put("suite_names", TUNE_SUITES if self.suites is None else parse_tune_suites(self.suites))
        put("reps", check_reps(self.reps))
        put("wanted", {k.strip() for k in self.kernels or () if k.strip()})
        put("command", tuple(self.command))

    def array_bytes_for(self, info: Mapping[str, Any]) -> int:
        """Bytes per STREAM / sweep array on the device ``info`` describes (:attr:`array_bytes`, or a
        run's default, or with ``quick`` the smallest that still measures DRAM), checked.

        Raises:
            OptionError: (option ``array_bytes``) out of range for this device.
        """
        array_bytes = self.array_bytes
        if array_bytes is None:
            array_bytes = dram_array_bytes(info) if self.quick else default_array_bytes(info)
        return check_array_bytes(array_bytes, info)

    def sizes_for(self, simd: int, limit: int) -> List[int]:
        """The block sizes to try on a device of SIMD width ``simd`` and largest block ``limit``.

        Raises:
            OptionError: (option ``blocks``) a size that is no multiple of ``simd`` or above ``limit``.
        """
        return (
            check_blocks(list(self.blocks), simd, limit)
            if self.blocks is not None
            else candidates(simd, limit, self.quick)
        )

    def recorded(self, sizes: Sequence[int], simd: int, limit: int, array_bytes: int) -> Dict[str, Any]:
        """The study's ``params``, as its results and its journal record them."""
        return {
            "suites": list(self.suite_names),
            "kernels": sorted(self.wanted),
            "candidates": list(sizes),
            "simd_width": simd,
            "max_block": limit,
            "quick": self.quick,
            "reps": self.reps,
            "array_bytes": array_bytes,
        }


class TuneRunner:
    """One tuning study of ``options`` on ``device``, in small steps: the device opened and the
    device-dependent options checked when built, then :meth:`run` tunes suite after suite and
    assembles the study (:meth:`assemble`) from what it holds so far."""

    def __init__(
        self,
        device: Union[str, DeviceSpec, None],
        options: TuneOptions,
        *,
        progress: Optional[Progress] = None,
        journal: Optional[Journal] = None,
    ) -> None:
        self.options, self.progress = options, progress
        self.spec = resolve_device(device)
        backend = open_device(self.spec)
        self.info: Dict[str, Any] = dict(backend.info())
        self.array_bytes = options.array_bytes_for(self.info)
        self.ctx = SuiteContext(
            backend,
            str(self.info["backend"]),
            self.info,
            options.quick,
            self.array_bytes,
            {"max_launch_s": 0.01 if options.quick else 0.05},
        )
        simd, limit = _limits(self.ctx, options.suite_names, str(self.spec))
        self.sizes = options.sizes_for(simd, limit)
        self.params = options.recorded(self.sizes, simd, limit, self.array_bytes)
        self.created = provenance.now()
        self.journal = journal or Journal()
        self.found = TunePoints()

    def run(self) -> TuneStudy:
        """Tune every suite of the options; the study.

        Raises:
            As :func:`run_tune`.
        """
        opts = self.options
        self.journal.begin(TuneStudy, created=self.created, device=self.info, command=opts.command, options=self.params)
        try:
            timing = PointTiming(opts.reps, 0.05 if opts.quick else 0.5)
            for name in opts.suite_names:
                tune_suite(
                    self.ctx,
                    name,
                    self.sizes,
                    self.found,
                    timing,
                    kernels=opts.wanted or None,
                    progress=self.progress,
                    journal=self.journal,
                )
        except (KeyboardInterrupt, DeviceStopped) as exc:
            raise TuneInterrupted(self.assemble(False), exc) from None
        finally:
            self.journal.close()
        wanted = sorted(opts.wanted)
        found = self.found
        if wanted and not (found.measurements or found.rejected or found.skipped):
            raise OptionError(
                "kernels",
                ",".join(wanted),
                "kernel names of the suites "
                f"{', '.join(opts.suite_names)} (e.g. triad, vec4_indep4, peak/scalar_indep8/fp64)",
                problem="names no kernel",
                shown=",".join(wanted),
            )
        if not found.measurements:  # every size rejected, or every kernel one the device cannot run
            raise nothing_measured(
                f"{self.info.get('name', self.spec)} ran no kernel at any block size",
                [f"block {x.block}: {x.message}" for x in found.rejected] + [s.reason for s in found.skipped],
            )
        return self.assemble(True)

    def assemble(self, complete: bool) -> TuneStudy:
        """The study of what was measured so far."""
        measured = self.found.measurements
        warnings = [
            f"{m.label} block={m.params['block']} failed validation: {m.validation}" for m in measured if not m.valid
        ]
        warnings += [
            f"{m.label} block={m.params['block']}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)"
            for m in measured
            if m.valid and m.cv > CV_WARN
        ]
        opts = self.options
        return TuneStudy(
            params=self.params,
            measurements=tuple(measured),
            rejected=tuple(self.found.rejected),
            skipped=tuple(self.found.skipped),
            warnings=tuple(warnings),
            **finished_header(
                created=self.created,
                device={**self.info, "array_bytes": self.array_bytes, "quick": opts.quick, "reps": opts.reps},
                command=opts.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )


class QuickTuner:
    """``run --tune``'s tuner: before each suite of :data:`TUNE_SUITES`, a quick tune of its kernels
    (the SIMD width times powers of two, ``reps`` samples each) and the best size of each.

    Raises (from :meth:`blocks`):
        OptionError: (option ``device``) the device has no threadgroup size (the CPU).
    """

    def __init__(self, reps: int = DEFAULT_REPS) -> None:
        self.reps = check_reps(reps)

    def describe(self) -> str:
        """How the sizes were found, for the run's ``device.tune``."""
        return "quick tune before each suite (SIMD width x powers of two, best median throughput)"

    def blocks(self, ctx: SuiteContext, suite: str, progress: Optional[Progress] = None) -> Mapping[str, int]:
        """The best block size of each kernel of ``suite`` (``"suite/kernel/dtype"`` to threads),
        empty for a suite without one to tune."""
        if suite not in TUNE_SUITES:
            return {}
        simd, limit = _limits(ctx, (suite,), ctx.backend_name)
        found = TunePoints()
        tune_suite(ctx, suite, candidates(simd, limit, True), found, PointTiming(self.reps, 0.05), progress=progress)
        return {k: int(m.params["block"]) for k, m in best_blocks(found.measurements).items()}


class FileTuner:
    """``run --tune-file``'s tuner: the best sizes of a ``tune`` study (:meth:`TuneStudy.blocks`)."""

    def __init__(self, study: TuneStudy, source: str = "") -> None:
        self.study = study
        self.source = source

    def describe(self) -> str:
        """How the sizes were found, for the run's ``device.tune``."""
        return f"best sizes of the tuning study {self.source or ''} ({self.study.device_name}, {self.study.created})"

    def blocks(self, ctx: SuiteContext, suite: str, progress: Optional[Progress] = None) -> Mapping[str, int]:
        """The study's best size of each kernel of ``suite``."""
        return {k: b for k, b in self.study.blocks().items() if k.startswith(f"{suite}/")}
