"""Runs the suites on one device and assembles a :class:`~.run.Run`.

For every case of every requested suite: get the kernel (compile or vendor routine), time it with
the measurement loop (:mod:`apple_roofline.measure`, docs/design/measurement.md, "Measurement"), validate its
output against the NumPy reference, and record a Measurement; kernels the device cannot run are
recorded as skipped with the backend's reason. The measured ceilings come from valid measurements
only (:func:`~.model.derive_ceilings`); theoretical ones from :mod:`apple_roofline.theoretical`.
"""

from __future__ import annotations

import dataclasses
import gc
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...devices import open_device, resolve_device
from ...errors import DeviceStopped, OptionError, reasons_text
from ...host import provenance
from ...kernel_cache import CacheWarnings
from ...study.document import finished_header
from ...study.files import ResultsError
from ...study.journal import Journal
from ...study.progress import Progress, StudyInterrupted, announce_doing, announce_plan
from ...study.records import CONVENTIONS, REMEASURED_PARAM, Measurement, Skipped
from ...study.timing import OutsideClock, PhaseTime, SuiteClock, SuiteTime, cut_warning
from ...suites import SuiteContext, registry
from ...suites.base import BLOCKS_OPTION, HostScratch, reads_copy
from ...suites.work import QUICK_SHRINK_OPTION
from ...telemetry import NullSampler, sampler_for
from ...telemetry.starting import SamplerStart
from ...theoretical import device_theoretical, host_cpu_spec
from ...theoretical.cpu_clock import RunClock, clock_warnings
from ...timing.clocks import CLOCK_TOLERANCE, below_steady, mark_steady
from ...timing.stats import CV_WARN, NOISY_CV
from ..model.limits import check_limits, limit_warnings
from ..model.model import derive_ceilings
from ..model.run import Run
from .case_loop import CaseSettings, measure_suite_cases, params_summary
from .cases import measurement_params
from .later import LaterChecks
from .options import OPTION_FLAGS, RunOptions
from .predict import Policy
from .probe import probe_rates
from .quick_plan import PLAN_KEY, QuickPlan, plan_quick

__all__ = [
    "cv_warnings",
    "RunInterrupted",
    "RooflineRunner",
    "measurement_params",
    "run_roofline",
]


class RunInterrupted(StudyInterrupted[Run]):
    """Raised when the run was interrupted (Ctrl-C); ``partial`` holds what was measured so far,
    with ``complete=False``."""

    MESSAGE = "run interrupted"


class RooflineRunner:
    """One roofline run of ``options`` on its ``device``, in small steps (after google/benchmark's
    BenchmarkRunner): opening the device and checking the device-dependent options when built,
    then :meth:`run` measures suite after suite (:meth:`measure_suite`) and assembles the Run
    (:meth:`assemble`). What it measured so far is in :attr:`measurements`, :attr:`skipped` and
    :attr:`times`, so an interrupted run still assembles. ``started`` is where the start-up phase
    begins (:meth:`phase_times`), ``(perf_counter time, what it is)``; default: this construction.

    Raises:
        OptionError: ``options.device`` malformed or not available; ``options.array_bytes`` outside
            :func:`~.options.array_bytes_range` of the device.
        _core.BackendError: subclasses, when the device cannot be opened.
    """

    def __init__(
        self,
        options: RunOptions,
        *,
        progress: Optional[Progress] = None,
        journal: Optional[Journal] = None,
        started: Optional[Tuple[float, str]] = None,
    ) -> None:
        #: the time outside the suites: the start-up from ``started`` (else this call), between suites
        self.outside = OutsideClock(started)
        self.options = options
        self.progress = progress
        self.journal = journal or Journal()
        self.spec = resolve_device(options.device)
        with self.outside.step("device"):
            backend = open_device(self.spec)
        self.info: Dict[str, Any] = dict(backend.info())
        self.array_bytes = options.array_bytes_for(self.info)
        self.ctx = SuiteContext(
            backend,
            str(self.info["backend"]),
            self.info,
            options.quick,
            self.array_bytes,
            self._suite_options(),
            HostScratch(ahead=reads_copy(backend)),  # outputs read into host memory faulted in ahead
        )
        # a CPU's measured clock is read again after each suite and the peaks rest on the readings'
        # robust estimate (docs/design/limits.md, "Theoretical ceilings")
        self.cpu_clock = RunClock(host_cpu_spec()) if self.info.get("backend") == "cpu" else None
        if self.cpu_clock is not None:
            with self.outside.step("clock"):
                self.cpu_clock.take()  # a second at the start: a one-suite run still has three readings
        self.device_desc, self.theoretical = (
            self.cpu_clock.theoretical() if self.cpu_clock is not None else device_theoretical(self.info)
        )
        self.created = provenance.now()
        self.sampler = (
            sampler_for(self.spec.backend, self.spec.index, self.info)
            if options.telemetry
            else NullSampler("telemetry turned off")
        )
        # a GPU's sampler opens (NVML) while the rest starts up; a CPU's is quick to open and a
        # thread would take a core from what is measured
        self.sampler_start = SamplerStart(self.sampler, background=self.spec.backend != "cpu")
        self.window_s = 0.0  # set once the sampler has started (:meth:`run`)
        self.cache_warnings = CacheWarnings()
        self.measurements: List[Measurement] = []
        self.skipped: List[Skipped] = []
        self.times: List[SuiteTime] = []
        #: seconds of budget per suite: the options', or a quick run's planned ones (:meth:`plan_quick`)
        self.budgets_s: Dict[str, float] = dict(options.budgets_s)
        #: a quick run's plan as the results header records it (empty: none was made)
        self.quick_plan: Dict[str, Any] = {}
        #: a resumed quick run whose journal held no plan (made by an earlier version): planned again
        self.replanned = False
        #: where reads copy (a discrete GPU), the worker that compares outputs while the next case
        #: measures (:mod:`.later`); made by :meth:`run`, stopped when it ends
        self.later: Optional[LaterChecks] = None

    def phase_times(self) -> Tuple[PhaseTime, ...]:
        """The start-up (to the first suite's start) and the time between suites, as far as known
        (:meth:`~apple_roofline.study.timing.OutsideClock.phases`)."""
        return self.outside.phases(self.times)

    def plan_quick(self) -> None:
        """With ``--quick`` and no ``--budget`` (nor ``--sustain`` or ``--power-window``): the quick run's
        budgets and grid. A new run measures the machine's rates (:func:`.probe.probe_rates`), predicts
        each suite's time and sizes its budget and the grid from it (:func:`.quick_plan.plan_quick`,
        docs/design/budgets.md, "Time budgets"), and keeps the plan in its journal's header; a resumed run
        takes that plan (:meth:`~apple_roofline.study.journal.Journal.decided`), so it measures the
        grid it started with at its budgets and keeps what it measured. A device the probe cannot
        run keeps the default budgets and grid.

        Raises:
            DeviceStopped: the probe's launches outlasted their bound.
            ResultsError: the resumed journal's plan cannot be read (names the journal).
        """
        opts = self.options
        if not opts.quick or opts.budget is not None or opts.sustain_s or opts.power_window:
            return
        made: List[bool] = []

        def make() -> Dict[str, Any]:
            made.append(True)
            return self._new_quick_plan()

        record = self.journal.decided(PLAN_KEY, make)
        if self.journal.previous is not None:
            self.replanned = bool(made)
            if not made:
                announce_doing(self.progress, "planning the quick run as its journal's plan says")
        if not record:
            return
        try:
            plan = QuickPlan.from_record(record, opts.suite_names)
        except ValueError as exc:
            raise ResultsError(f"{self.journal.path}: line 1: {exc}") from None
        self.ctx = dataclasses.replace(self.ctx, options={**self.ctx.options, QUICK_SHRINK_OPTION: plan.shrink})
        self.budgets_s = dict(plan.budgets_s)
        self.quick_plan = record

    def _new_quick_plan(self) -> Dict[str, Any]:
        """A new quick plan's record (:meth:`.quick_plan.QuickPlan.record`) from this machine's rates;
        empty where the probe cannot run."""
        opts = self.options
        announce_doing(self.progress, "measuring this machine's rates to plan the quick run")
        rates = probe_rates(self.ctx)
        if rates is None:
            return {}
        ctx = self.ctx
        plan = plan_quick(
            opts.suite_names,
            lambda shrink: dataclasses.replace(ctx, options={**ctx.options, QUICK_SHRINK_OPTION: shrink}),
            rates,
            Policy(opts.reps, opts.max_warmup_s),
            opts.budgets_s,
        )
        return plan.record(rates)

    def _suite_options(self) -> Dict[str, Any]:
        quick, named = self.options.quick, self.options.suites is not None
        return {
            "max_launch_s": 0.01 if quick else 0.05,
            "gemm_max_launch_s": 0.03 if quick else 0.25,
            **(registry.quick_options() if quick else {}),  # each suite's --quick options (its spec)
            **registry.suite_options(named),  # each suite's sweep form, named or default (its spec)
        }

    def run(self) -> Run:
        """Measure every suite of the options and return the Run with its ceilings.

        Raises:
            OptionError: (option ``resume``) a resumed journal of another device or other options;
                after measuring, suites of which this device runs no kernel: nothing was measured.
            RunInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial Run.
        """
        opts = self.options
        self.journal.begin(
            Run,
            created=self.created,
            device={**self.info, **self.device_desc},
            command=opts.command,
            options=opts.recorded(self.array_bytes),
            flags=OPTION_FLAGS,
        )
        self.later = LaterChecks() if self.ctx.scratch.ahead else None
        try:
            with self.outside.step("plan"):
                self.plan_quick()
            with self.outside.step("telemetry"):  # where it opened on a thread, the wait for it
                self.sampler_start.wait()
            self.window_s = max(
                self.sampler.power_window_s if opts.power_window and self.sampler.active else 0.0, opts.sustain_s
            )
            announce_plan(
                self.progress,
                opts.suite_names,
                [self.budgets_s[name] for name in opts.suite_names],
                [self.quick_plan.get("predicted_s", {}).get(name, 0.0) for name in opts.suite_names],
            )
            self.outside.suites_begin()
            for name in opts.suite_names:
                self.measure_suite(name)
            self.outside.suites_done()
        except (KeyboardInterrupt, DeviceStopped) as exc:
            self.sampler_start.join()  # never stopped while it opens
            self.sampler.stop()
            raise RunInterrupted(self.assemble(False), exc) from None
        finally:
            self.sampler_start.join()
            self.sampler.stop()
            self.journal.close()
            if self.later is not None:
                self.later.close()
        if not self.measurements:  # every kernel of the suites asked for is one this device cannot run
            names = ",".join(opts.suite_names)
            cut = [t.suite for t in self.times if t.cut]
            raise OptionError(
                "suites",
                names,
                "suites with a kernel this device runs",
                problem=f"cannot run on {self.info.get('name', self.spec)}",
                shown=names,
                reason=reasons_text([s.reason for s in self.skipped])
                or (
                    f"the time budget of {', '.join(cut)} ran out before its first case (raise it "
                    "with --budget SUITE=SECONDS)"
                    if cut
                    else "no case to measure"
                ),
            )
        return self.assemble(True)

    def measure_suite(self, name: str) -> None:
        """Measure the suite ``name`` (its block sizes from the tuner, where one is given), keeping
        its outcomes and its time as they come; read a CPU's clock after it. Python's cyclic
        garbage is collected first (docs/design/measurement.md, "Measurement", "Each suite starts clean"): what
        the suites before left in reference cycles is released before this one allocates, at the
        same point in every run, not whenever the collector's thresholds happen to fall."""
        gc.collect()
        tuner, progress = self.options.tuner, self.progress
        self.ctx.scratch.reserve(self.array_bytes)  # faulted in while the device works, where reads copy
        blocks = tuner.blocks(self.ctx, name, progress) if tuner is not None else {}
        suite_options = {**self.ctx.options, BLOCKS_OPTION: dict(blocks)} if blocks else self.ctx.options
        suite = registry.spec(name).measure(dataclasses.replace(self.ctx, options=suite_options))
        planned = suite.total()
        if progress:
            progress.start(name, planned)
        clock = SuiteClock(name, self.budgets_s[name], planned)
        settings = CaseSettings(self.options.reps, self.options.max_warmup_s, self.sampler, self.window_s, self.later)
        try:
            for outcome in measure_suite_cases(suite, settings, clock, self.journal, progress):
                if isinstance(outcome, Measurement):
                    self.measurements.append(outcome)
                else:
                    self.skipped.append(outcome)
        finally:
            self.times.append(clock.record())
        if self.cpu_clock is not None:
            self.cpu_clock.take()  # between suites, and after the last one (about 50 ms)
        if progress:
            progress.finish(name, clock.progress_note())

    def assemble(self, complete: bool) -> Run:
        """The Run of what was measured so far: measurements marked against the steady clock and
        the physical limits, ceilings measured and theoretical, warnings."""
        marked, steady = mark_steady(self.measurements)  # docs/design/clocks.md, "Clocks": the run's steady clock
        desc, peaks = (
            self.cpu_clock.theoretical(marked) if self.cpu_clock is not None else (self.device_desc, self.theoretical)
        )
        # every figure against the physical limit of what it is labelled with (docs/design/limits.md, "Physical limits")
        marked = check_limits(marked, peaks, {**self.info, **desc})
        return Run(
            measurements=marked,
            ceilings=tuple(derive_ceilings(marked)) + tuple(peaks),
            skipped=tuple(self.skipped),
            warnings=tuple(self._warnings(marked, steady, desc)) + (tuple(self.unused_warnings()) if complete else ()),
            conventions=CONVENTIONS,
            suite_times=tuple(self.times),
            phase_times=self.phase_times(),
            **finished_header(
                created=self.created,
                device=self._device_header(desc, steady),
                command=self.options.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )

    def unused_warnings(self) -> List[str]:
        """Where this run was resumed: one warning naming the measurements its journal holds that the
        run did not take (their keys are not in its plan, or lie past a budget's cut), and why the
        plan differs where that is known; none when every kept measurement was used."""
        previous = self.journal.previous
        used = set(self.journal.resumed_keys)
        unused = [k for k in previous.records if k not in used] if previous is not None else []
        if not unused:
            return []
        assert previous is not None
        why = []
        if self.replanned:
            why.append("the journal holds no quick plan (an earlier version's), so this run planned its grid again")
        if self.options.tuner is not None:
            why.append("--tune chose the block sizes again (a kernel whose size changed is measured at it)")
        if any(t.cut for t in self.times):
            why.append("a budget cut a suite before them")
        return [
            f"{len(unused)} of the {len(previous.records)} measurements the resumed journal holds were not used: "
            "this run reached no case with their key"
            + (f" ({'; '.join(why)})" if why else "")
            + ": "
            + ", ".join(unused[:5])
            + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        ]

    def _device_header(self, desc: Mapping[str, Any], steady: Optional[float]) -> Dict[str, Any]:
        telemetry = {**self.sampler.describe(), **({"power_window_s": self.window_s} if self.window_s else {})}
        return {
            **self.info,
            **desc,
            **self.options.header(self.array_bytes),
            "telemetry": telemetry,
            **({"steady_clock_mhz": round(steady, 1)} if steady is not None else {}),
            **registry.device_facts(self.options.suite_names, self.info),
            **({PLAN_KEY: self.quick_plan} if self.quick_plan else {}),
        }

    def _warnings(self, marked: Sequence[Measurement], steady: Optional[float], desc: Mapping[str, Any]) -> List[str]:
        measured = self.measurements
        warnings = [f"{m.label} failed validation: {m.validation}" for m in measured if not m.valid]
        warnings += cv_warnings(measured)
        warnings += registry.sizing_warnings(measured, self.ctx)  # the working sets the suites' cases ran on
        warnings += [w for w in map(cut_warning, self.times) if w]
        warnings += self.cache_warnings.new()  # docs/design/backends.md, "The kernel cache"
        warnings += clock_warnings(desc)
        warnings += limit_warnings(marked)
        # the suites' own rules (docs/design/hierarchy.md, "The memory hierarchy")
        warnings += registry.suite_warnings(marked)
        below = below_steady(marked)
        if below and steady is not None:
            warnings.append(
                f"{len(below)} measurement(s) ran more than {CLOCK_TOLERANCE:.0%} under the run's steady "
                f"clock of {steady:.0f} MHz (marked clock=below steady): "
                + ", ".join(sorted({m.label for m in below})[:8])
                + (", ..." if len(below) > 8 else "")
            )
        return warnings


def run_roofline(options: RunOptions) -> Run:
    """Measure ``options.device`` ("cpu", "cuda:0", "metal:0" or a DeviceSpec; None: the best
    available) with ``options.suites`` (None: the registry's default suites,
    :func:`~apple_roofline.suites.registry.default_suites`, in the forms each takes unnamed, e.g.
    matrix's largest tile per precision and instruction; the opt-in suites and the named forms only
    when named) and return the Run with its ceilings: :class:`RooflineRunner` with no progress display
    and no journal (the runner takes those, as ``run`` gives them).

    The options (:class:`~.options.RunOptions`): ``array_bytes`` is the size of each STREAM array in
    bytes (None: :func:`~.options.default_array_bytes`); ``quick`` trims the sweep to F = 1, 4 … 1024
    and shortens time budgets, sized from a prediction of each suite's time on the machine at hand
    (:meth:`RooflineRunner.plan_quick`, docs/design/budgets.md, "Time budgets": under a minute on a 2-core
    machine); ``reps`` is the samples per measurement; ``command`` is the command line to record.
    ``telemetry`` samples clocks and power in the background (docs/design/power.md, "Clocks and power":
    NVML on CUDA GPUs, RAPL and cpufreq on Linux CPUs) and attaches them to each measurement;
    ``device["telemetry"]`` records the sampler, or why none read. A sampler that cannot read never
    fails the run. ``power_window`` lengthens every measurement's timed samples to the sampler's
    :attr:`~apple_roofline.telemetry.Sampler.power_window_s` (twice its power averaging), so that each
    gets power; off by default, as it slows a run (with NVML's 1-s average, by about 2 s per
    measurement). ``sustain_s`` > 0 (at most :data:`~.options.MAX_SUSTAIN_S`) makes every measurement's
    timed samples last at least that many seconds, so that it reports the sustained rate, after the
    power and thermal controllers have acted, not the burst a short measurement sees (docs/design/power.md,
    "Clocks and power"). ``tuner`` chooses each kernel's block size before its suite is measured
    (docs/design/studies.md, "Threadgroup-size tuning"); every measurement records the size its kernel ran
    at as the parameter ``block`` (where it has one). ``budget`` sets the seconds each suite may take
    (:func:`~.budget.suite_budgets`: ``"none"``, ``"gemm=120"`` or a mapping; default
    :func:`~.budget.default_budgets`, none when ``sustain_s`` or ``power_window`` lengthen every
    measurement): checked before each case, a spent budget leaves the suite's remaining cases
    unmeasured, warned about and marked in the run's ``suite_times`` (docs/design/budgets.md, "Time
    budgets"), which record every suite's seconds.

    Raises:
        OptionError: (a ValueError) a bad option, before anything is measured: ``device`` malformed
            or not available, ``array_bytes`` outside :func:`~.options.array_bytes_range` (the
            options' own checks, an unknown suite, ``reps`` outside 1 to 10000, ``sustain_s`` outside
            0 to :data:`~.options.MAX_SUSTAIN_S`, a malformed ``budget`` or one outside (0, 3600]
            seconds, raise when they are built); after measuring, suites of which this device runs no
            kernel (``matrix`` on a CPU): nothing was measured.
        _core.BackendError: subclasses, for device failures.
        RunInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial Run.
    """
    return RooflineRunner(options).run()


def cv_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One warning per valid measurement whose CV exceeds :data:`~apple_roofline.timing.stats.CV_WARN`
    (5 %); one above :data:`~apple_roofline.timing.stats.NOISY_CV` (50 %) says it stayed that noisy when
    measured again (docs/design/measurement.md, "Noisy samples")."""
    out = []
    for m in measurements:
        if not m.valid or m.cv <= CV_WARN:
            continue
        where = f"{m.label} {params_summary(m.params)}"
        if m.noisy:
            first = m.params.get(REMEASURED_PARAM)
            again = f", and {first:.1%} the first time" if isinstance(first, (int, float)) else ""
            out.append(f"{where}: CV {m.cv:.1%} > {NOISY_CV:.0%}{again} (noisy even when measured twice)")
        else:
            out.append(f"{where}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
    return out
