"""Runs the graphics suites on one GPU and assembles a :class:`~.model.GraphicsStudy`.

The passes come from a grid (:mod:`.grid`: ``default``, ``quick`` or ``full``, any axis replaceable).
Each suite runs against a time budget (:func:`~.grid.graphics_budgets`, checked before each pass,
and a pass predicted to end past it not started, :mod:`.passes`: a spent budget leaves the suite's
remaining passes unmeasured, recorded in ``suite_times`` and warned about; a suite that still ran over,
by a pass longer than predicted or the checks it waits for at its end, says by how much,
:func:`over_budget`). Each pass is timed at the GPU's loaded clock by :class:`~.pacing.Pacer` (one
submission of lead passes and samples; batches divided by their count; calibration shared by passes
of the same shape), then its target is read back and compared with the NumPy reference
(:mod:`.kernels`) on a worker thread (:mod:`.checks`) while the next pass runs; a pass that fails is
kept, marked invalid, and makes the command exit 1. Every pass carries the clocks and power of its
timed samples and, once the study is done, whether it ran at the study's steady clock
(:func:`~.clocks.steady_clock`).

Options are checked in :mod:`.options` (its checks are re-exported here for the command line), the
passes built, timed and queued for checking in :mod:`.passes` (layers, calibration).

Devices: ``wgpu:N`` (the N-th wgpu adapter: Vulkan, Metal, D3D12); ``metal:N``, the native Metal
render passes, is built on macOS only (docs/design/graphics.md, "The graphics study").
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from ..errors import DeviceStopped, nothing_measured
from ..host import provenance
from ..study.document import finished_header
from ..study.journal import Journal
from ..study.progress import Progress, StudyInterrupted
from ..study.timing import OutsideClock, PhaseTime, SuiteClock, SuiteTime, cut_warning
from ..telemetry import NullSampler
from ..telemetry.choose import graphics_sampler
from ..telemetry.starting import SamplerStart
from ..timing.clocks import CLOCK_TOLERANCE, below_steady, mark_steady
from ..timing.stats import CV_WARN
from .checks import Checks
from .grid import Grid
from .model import GraphicsStudy, describe_case
from .options import GraphicsOptions
from .pacing import MIN_SAMPLE_S, SPIN_UP_S, Pacer
from .passes import PassMeasurer, fitting
from .wedged import WEDGED_GPU_HINT, wedged_gpu_suspected

__all__ = [
    "OVER_BUDGET_S",
    "over_budget",
    "GraphicsInterrupted",
    "GraphicsRunner",
    "open_graphics_device",
    "run_graphics",
]


#: Seconds past its budget from which a suite's time is said to have run over it (below, the clock's
#: own granularity and the progress line's).
OVER_BUDGET_S = 0.05


def over_budget(t: SuiteTime) -> Optional[str]:
    """The warning of a suite that ran :data:`OVER_BUDGET_S` or more past its budget: ``"suite fillrate
    ran 2.0 s over its 6 s budget (8.0 s): ..."``; None within it or without one."""
    over = t.seconds - t.budget_s
    if t.budget_s <= 0 or over < OVER_BUDGET_S:
        return None
    return (
        f"suite {t.suite} ran {over:.1f} s over its {t.budget_s:g} s budget ({t.seconds:.1f} s): a pass is never "
        "interrupted, one can take longer than predicted, and the suite waits for its passes' checks"
    )


class GraphicsInterrupted(StudyInterrupted[GraphicsStudy]):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    MESSAGE = "graphics study interrupted"


def open_graphics_device(api: str, index: int) -> Any:
    """Open ``wgpu:index`` (:class:`~.wgpu_device.WgpuDevice`, once per process:
    :func:`~.wgpu_device.open_wgpu_device`) or ``metal:index``
    (:class:`~.native_device.NativeGraphicsDevice`).

    Raises:
        WgpuUnavailable: wgpu is not installed or has no such adapter.
        OptionError: (option ``device``) no Metal backend in this build, or no such Metal device.
    """
    if api == "wgpu":
        from .wgpu_device import open_wgpu_device

        return open_wgpu_device(index)
    from .native_device import NativeGraphicsDevice

    return NativeGraphicsDevice(index)


class GraphicsRunner:
    """One graphics study of ``options``, in small steps: the device opened and the pacer and pass
    measurer made when built, then :meth:`run` measures suite after suite (:meth:`measure_suite`)
    and assembles the study (:meth:`assemble`) from what it holds so far. ``started`` is where the
    start-up phase begins (``(perf_counter time, what it is)``, as
    :func:`~apple_roofline.study.timing.process_start` gives it); default: this construction. The
    study records its start-up and the time between suites (``phase_times``); its end is the
    writer's (:func:`~.outputs.write_timed_graphics`).

    Raises:
        WgpuUnavailable: wgpu is not installed or has no such adapter (wgpu devices).
    """

    def __init__(
        self,
        options: GraphicsOptions,
        *,
        progress: Optional[Progress] = None,
        journal: Optional[Journal] = None,
        started: Optional[Tuple[float, str]] = None,
    ) -> None:
        #: the time outside the suites: the start-up from ``started`` (else this call), between suites
        self.outside = OutsideClock(started)
        self.options, self.progress = options, progress
        with self.outside.step("device"):
            self.gpu = open_graphics_device(options.api, options.index)
        self.created = provenance.now()
        self.sampler = (
            graphics_sampler(options.api, {"name": self.gpu.name, **self.gpu.info})
            if options.telemetry
            else NullSampler("telemetry turned off")
        )
        quick = options.quick
        self.pacer = Pacer(
            self.sampler,
            reps=options.reps,
            min_sample_s=MIN_SAMPLE_S / 5 if quick else MIN_SAMPLE_S,
            spin_up_s=SPIN_UP_S / 4 if quick else SPIN_UP_S,
        )
        self.journal = journal or Journal()
        self.measuring = PassMeasurer(self.gpu, self.pacer, Checks(), options, self.journal)
        self.params = options.params(self.pacer.spin_up_s, self.pacer.min_sample_s)
        self.times: List[SuiteTime] = []

    def run(self) -> GraphicsStudy:
        """Measure every suite of the options; the study.

        Raises:
            As :func:`run_graphics`; OptionError (option ``resume``) for a resumed journal of another
            device or other options.
        """
        opts, journal, measuring = self.options, self.journal, self.measuring
        journal.begin(
            GraphicsStudy,
            created=self.created,
            device={"name": self.gpu.name, **self.gpu.info},
            command=opts.command,
            options=opts.recorded(self.pacer.spin_up_s, self.pacer.min_sample_s),
        )
        # a GPU's sampler (NVML's initialisation) opens on a thread; the first pass waits for it, so
        # the first suite's references and pipelines are prepared meanwhile (a CPU adapter's RAPL,
        # quick to open, starts there too, with no thread beside the cores it measures)
        started = SamplerStart(self.sampler, background=str(self.gpu.info.get("adapter_type", "")).lower() != "cpu")
        self.pacer.ready = started.wait
        try:
            self.outside.suites_begin()
            for name in opts.names:
                self.measure_suite(name)
            self.outside.suites_done()
        except (KeyboardInterrupt, DeviceStopped) as exc:
            started.join()  # never stopped while it opens
            self.sampler.stop()
            measuring.checks.close()
            journal.close()
            partial = self.assemble(False)
            if isinstance(exc, DeviceStopped) and not partial.measurements and wedged_gpu_suspected(self.gpu.info):
                exc = DeviceStopped(exc.pass_name, exc.bound_s, WEDGED_GPU_HINT)
            raise GraphicsInterrupted(partial, exc) from None
        finally:
            started.join()
            self.sampler.stop()
        measuring.checks.close()
        journal.close()
        study = self.assemble(True)
        if not study.measurements:  # the device drew none of the passes asked for
            raise nothing_measured(f"{self.gpu.name} ran none of the passes", [s.reason for s in study.skipped])
        return study

    def measure_suite(self, name: str) -> None:
        """Measure the passes of the suite ``name`` until its budget is spent; its seconds (which
        include checking its passes) are kept even when it is interrupted."""
        plan, measuring, progress = self.options.plan, self.measuring, self.progress
        planned = _count(plan, name, self.gpu)
        if progress:
            progress.start(name, planned)
        clock = SuiteClock(name, self.options.budgets_s[name], planned)
        try:
            cases = (
                measuring.texture_cases(plan.texture, clock)
                if name == "texture"
                else measuring.fill_cases(name, plan.fillrate if name == "fillrate" else plan.tilemem, clock)
            )
            for desc in cases:
                if progress:
                    progress.advance(desc)
            measuring.settle()  # a suite's seconds include checking its passes
        finally:
            self.times.append(clock.record())
        if progress:
            progress.finish(name, clock.progress_note())

    def assemble(self, complete: bool) -> GraphicsStudy:
        """The study of what was measured so far: the passes marked against the steady clock, the warnings."""
        measurements, steady = mark_steady(self.measuring.collect())
        return GraphicsStudy(
            params={
                **self.params,
                **({"steady_clock_mhz": round(steady, 1)} if steady is not None else {}),
                "probes": self.pacer.probes,
                "retries": self.pacer.retries,
                "gpu_seconds": {k: round(v, 6) for k, v in self.pacer.gpu_s.items()},
            },
            measurements=measurements,
            skipped=tuple(self.measuring.skipped),
            warnings=tuple(self._warnings(measurements, steady)),
            suite_times=tuple(self.times),
            phase_times=self.phase_times(),
            **finished_header(
                created=self.created,
                device={"name": self.gpu.name, **self.gpu.info, "telemetry": self.sampler.describe()},
                command=self.options.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )

    def phase_times(self) -> Tuple[PhaseTime, ...]:
        """The start-up and the time between suites as far as known
        (:meth:`~apple_roofline.study.timing.OutsideClock.phases`)."""
        return self.outside.phases(self.times)

    def _warnings(self, measurements: Sequence[Any], steady: Optional[float]) -> List[str]:
        warns = list(self.measuring.warnings)
        warns += [w for w in map(cut_warning, self.times) if w]
        warns += [w for w in map(over_budget, self.times) if w]
        below = below_steady(measurements)
        if below:
            warns.append(
                f"{len(below)} of {len(measurements)} passes ran below the steady clock "
                f"({steady:.0f} MHz less {CLOCK_TOLERANCE:.0%}): "
                f"{', '.join(m.label + ' ' + describe_case(m.params) for m in below[:6])}"
                + (" …" if len(below) > 6 else "")
            )
        for m in measurements:
            if not m.valid:
                warns.append(f"{m.label} {describe_case(m.params)} failed validation: {m.validation}")
            elif m.cv > CV_WARN:
                warns.append(f"{m.label} {describe_case(m.params)}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
        return warns


def run_graphics(options: GraphicsOptions) -> GraphicsStudy:
    """Measure the graphics suites of ``options`` (``fillrate``, ``tilemem``, ``texture``; default all)
    on its device: :class:`GraphicsRunner` with no progress display and no journal (the runner takes
    those, as ``graphics`` gives them).

    The options (:class:`~.options.GraphicsOptions`, checked when built):
        device: ``"wgpu:N"`` or ``"metal:N"`` (:func:`~.options.parse_graphics_device`).
        overdraw: layers per fill pass (1 to :data:`~.options.MAX_OVERDRAW`).
        f_values, patterns, sizes, fetches, filters: replace that axis of the grid (F 0 to 512;
            ``coherent``/``random``; texture sides, powers of two 4 to 16384; fetches 1 to
            :data:`MAX_FETCHES`; ``nearest``/``bilinear``).
        width, height: the render target (default 1920 x 1080).
        quick: the ``quick`` grid, shorter spin-up and samples (the same as ``grid="quick"``).
        grid: ``"default"``, ``"quick"`` or ``"full"`` (:mod:`.grid`; default ``"quick"`` with ``quick``,
            else ``"default"``).
        reps: samples per pass (1 to 10000).
        max_pass_s: the longest one fill pass may take before its layers are reduced (default
            0.02 s, 0.01 s with ``quick``).
        budget: seconds each suite may take (``"none"``, ``"texture=60"`` or a mapping; default
            :data:`~.grid.SUITE_BUDGET_S`, :data:`~.grid.QUICK_BUDGET_S` for ``quick``, none for
            ``full``). A spent budget stops its suite before the next pass; ``suite_times`` and a
            warning say so.
        telemetry: sample clocks and power in the background, as the roofline runner does
            (docs/design/power.md, "Clocks and power": the Apple sampler on a Mac, NVML for an NVIDIA
            adapter, RAPL for a CPU adapter on Linux); each pass's measurement gets the clocks and
            power of its timed samples, ``clock`` (``"steady"`` or ``"below steady"``, :func:`~.clocks.steady_clock`),
            and ``device["telemetry"]`` records the sampler, or why none read. A sampler that cannot
            read never fails the study.
        command: the command line to record.

    Raises:
        OptionError: the Metal backend missing or without such a device (a bad option's value raises
            when the options are built; the message names the parameter and its range).
        WgpuUnavailable: wgpu is not installed or has no such adapter (wgpu devices).
        CannotMeasure: the device ran none of the passes (each skipped, with its reason).
        GraphicsInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    return GraphicsRunner(options).run()


def _count(plan: Grid, suite: str, dev: Any) -> int:
    return len(fitting(plan.texture, dev)) if suite == "texture" else plan.cases(suite)
