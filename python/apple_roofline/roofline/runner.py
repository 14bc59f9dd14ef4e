"""Runs the suites on one device and assembles a :class:`~.run.Run`.

For every case of every requested suite: get the kernel (compile or vendor routine), time it with
the measurement loop (:mod:`apple_roofline.measure`, docs/design.md, "Measurement"), validate its
output against the NumPy reference, and record a Measurement; kernels the device cannot run are
recorded as skipped with the backend's reason. The measured ceilings come from valid measurements
only (:func:`~.model.derive_ceilings`); theoretical ones from :mod:`apple_roofline.theoretical`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from .. import provenance
from ..clocks import CLOCK_TOLERANCE, below_steady, mark_steady
from ..devices import DeviceSpec, open_device, resolve_device
from ..errors import DeviceStopped, OptionError, reasons_text
from ..kernel_cache import CacheWarnings
from ..measure import DEFAULT_REPS, check_reps, time_kernel  # noqa: F401  (still runner.time_kernel)
from ..sizes import format_size
from ..stats import CV_WARN, NOISY_CV
from ..study.document import ToolInfo
from ..study.journal import Journal, record_key
from ..study.progress import Progress, StudyInterrupted, announce_doing, announce_plan
from ..study.timing import SuiteClock, SuiteTime, cut_warning
from ..suites import SuiteContext, registry
from ..suites.base import BLOCKS_OPTION, kernel_key
from ..telemetry import NullSampler, Sampler, sampler_for
from ..theoretical import device_theoretical, host_cpu_spec
from ..theoretical.cpu_clock import RunClock, clock_warnings
from .budget import Budgets, suite_budgets
from .cases import measure_case, measurement_params
from .ladder import LADDER_DROP, disturbed_gemms
from .limits import check_limits, limit_warnings
from .model import derive_ceilings
from .records import CONVENTIONS, REMEASURED_PARAM, Measurement, Skipped
from .run import Run

__all__ = [
    "OPTION_FLAGS",
    "cv_warnings",
    "rate_words",
    "MIN_ARRAY_BYTES",
    "RunInterrupted",
    "Tuner",
    "parse_suites",
    "default_array_bytes",
    "dram_array_bytes",
    "array_bytes_range",
    "check_array_bytes",
    "ladder_warnings",
    "params_summary",
    "measurement_params",
    "run_roofline",
    "check_sustain",
    "MAX_SUSTAIN_S",
]

MIB = 1 << 20
#: The smallest STREAM array accepted, bytes.
MIN_ARRAY_BYTES = 4096


class RunInterrupted(StudyInterrupted[Run]):
    """Raised when the run was interrupted (Ctrl-C); ``partial`` holds what was measured so far,
    with ``complete=False``."""

    MESSAGE = "run interrupted"


class Tuner(Protocol):
    """Chooses the block size of each kernel of a suite before the suite is measured (``run --tune``:
    :class:`apple_roofline.tuning.runner.QuickTuner`, :class:`~apple_roofline.tuning.runner.FileTuner`)."""

    def describe(self) -> str:
        """One line: how the sizes were chosen (recorded as the run's ``device.tune``)."""

    def blocks(self, ctx: SuiteContext, suite: str, progress: Optional[Progress] = None) -> Mapping[str, int]:
        """``"suite/kernel/dtype"`` to threads per block for the kernels of ``suite`` it has a size for."""


def parse_suites(
    text: Union[str, Sequence[str]], choices: Optional[Sequence[str]] = None, unknown: str = "is not a suite"
) -> Tuple[str, ...]:
    """Parse ``"stream,peak"`` (or ``["stream", "peak"]``) into ``("stream", "peak")``: the order of
    ``choices`` (default: every suite, :func:`~apple_roofline.suites.registry.suite_names`),
    duplicates dropped. ``unknown`` is the problem a name outside ``choices`` is reported with.

    Raises:
        OptionError: (option ``suites``) an unknown suite, or an empty list; the message names the
            valid suites.
    """
    choices = registry.suite_names() if choices is None else choices
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [s.strip().lower() for s in items if s.strip()]
    valid = ", ".join(choices)
    if not names:
        raise OptionError("suites", text, valid, problem="names no suite")
    for n in names:
        if n not in choices:
            raise OptionError("suites", n, valid, problem=unknown, shown=repr(n))
    return tuple(s for s in choices if s in names)


def default_array_bytes(info: Mapping[str, Any]) -> int:
    """Default bytes per STREAM array: 256 MiB (the M5 article's size), or 4× the last-level cache
    if that is larger — on Apple silicon the system-level cache (up to 96 MB) is not reported, so
    the floor also covers it — capped so three arrays take at most half the memory."""
    want = max(256 * MIB, 4 * int(info.get("llc_bytes", 0) or 0))
    mem = int(info.get("memory_bytes", 0) or 0)
    if mem:
        want = min(want, mem // 6 // MIB * MIB)
    return max(MIB, want)


def dram_array_bytes(info: Mapping[str, Any]) -> int:
    """The smallest STREAM array that still measures DRAM rather than a cache (docs/design.md,
    "Measurement"): 4× the last-level cache, rounded up to a MiB, at most :func:`default_array_bytes`;
    that default itself when the cache size is unknown (Apple's system-level cache is not reported,
    so only the 256 MiB floor is known to exceed it). ``tune --quick`` uses it."""
    llc = int(info.get("llc_bytes", 0) or 0)
    default = default_array_bytes(info)
    if not llc:
        return default
    return min(default, max(MIB, -(-4 * llc // MIB) * MIB))


def array_bytes_range(info: Mapping[str, Any]) -> Tuple[int, Optional[int]]:
    """The STREAM array sizes a device accepts, bytes: :data:`MIN_ARRAY_BYTES` to a third of half
    its memory (three arrays, plus validation's chunks and the interpreter, in half of memory), or
    no upper bound when the memory size is unknown."""
    mem = int(info.get("memory_bytes", 0) or 0)
    return MIN_ARRAY_BYTES, ((mem // 2) // 3 if mem else None)


def check_array_bytes(array_bytes: int, info: Mapping[str, Any]) -> int:
    """``array_bytes`` if it is within :func:`array_bytes_range` of the device ``info`` describes.

    Raises:
        OptionError: (option ``array_bytes``) out of range; the message gives the sizes and why.
    """
    lo, hi = array_bytes_range(info)
    if lo <= array_bytes and (hi is None or array_bytes <= hi):
        return array_bytes
    mem = int(info.get("memory_bytes", 0) or 0)
    valid = f"{format_size(lo)} to {format_size(hi)}" if hi is not None else f"{format_size(lo)} or more"
    raise OptionError(
        "array_bytes",
        array_bytes,
        valid,
        shown=format_size(array_bytes),
        reason=f"three arrays must fit in half of the {format_size(mem)} memory of {info.get('name', 'this device')}",
    )


#: The longest ``sustain_s`` (``run --sustain``): a minute of timed samples per measurement.
MAX_SUSTAIN_S = 60.0

#: The options of a run's journal that a command-line flag sets, in the order a resumed run checks
#: them: ``budgets_s`` follows from ``suites`` and ``quick``, so a difference there names them first.
OPTION_FLAGS: Mapping[str, str] = {
    "suites": "--suite",
    "quick": "--quick",
    "reps": "--reps",
    "array_bytes": "--array-size",
    "sustain_s": "--sustain",
    "power_window": "--power-window",
    "budgets_s": "--budget",
}


def check_sustain(sustain_s: object) -> float:
    """``sustain_s`` as seconds in 0 to :data:`MAX_SUSTAIN_S` (0: off).

    Raises:
        OptionError: (option ``sustain_s``) not a number, or out of range.
    """
    try:
        value = float(sustain_s)  # type: ignore[arg-type]  # any number, or its text
    except (TypeError, ValueError):
        raise OptionError(
            "sustain_s", sustain_s, f"0 to {MAX_SUSTAIN_S:g} seconds", problem="is not a number"
        ) from None
    if not 0.0 <= value <= MAX_SUSTAIN_S:
        raise OptionError("sustain_s", sustain_s, f"0 to {MAX_SUSTAIN_S:g} seconds")
    return value


def _run_suite(
    suite: Any,
    *,
    reps: int,
    max_warmup_s: float,
    measurements: List[Measurement],
    skipped: List[Skipped],
    progress: Optional[Progress],
    sampler: Optional[Sampler] = None,
    min_window_s: float = 0.0,
    clock: Optional[SuiteClock] = None,
    journal: Optional[Journal] = None,
) -> None:
    """Measure every case of ``suite``, appending to ``measurements`` and ``skipped``. The suite's
    buffers (held by its cases) are released when this returns, before the next suite allocates.
    ``min_window_s`` > 0 lengthens each measurement's timed samples to at least that long.
    ``clock`` counts the measured cases and is checked before each case: once its budget is spent
    the remaining cases are not measured and it is marked ``cut`` (docs/design.md, "Time budgets").
    ``journal`` gets each measurement as it finishes; a case its resumed journal holds is taken from
    it, not measured (docs/design.md, "Journal and resume")."""
    from .._native import _core

    journal = journal or Journal()
    announce_doing(progress, f"allocating and writing {suite.name}'s inputs")
    for case in suite.cases():
        k = case.kernel
        label = f"{k.suite}/{k.name}/{k.dtype} {params_summary(case.params)}"
        if clock is not None and clock.cut_here(label.strip()):
            return
        announce_doing(progress, f"{label}: measuring and validating")
        block = suite.constants(k).get("BLOCK")  # the table's, or the one --tune chose: part of what is measured
        key = record_key(kernel_key(k), params={**case.params, **({"BLOCK": block} if block else {})})
        stored = journal.stored(key)
        if stored is not None:
            m = Measurement.from_dict(stored, source=str(journal.path), where=key)
            measurements.append(m)
            if clock is not None:
                clock.measured += 1
            suite.record(m)
            if progress:
                progress.advance(f"{label}: resumed")
            continue
        try:
            kernel = case.make_kernel()
        except _core.UnsupportedError as exc:
            skipped.append(Skipped(k.suite, k.name, k.dtype, str(exc)))
            if progress:
                progress.advance(f"{label}: unsupported")
            continue
        m = measure_case(case, kernel, reps=reps, max_warmup_s=max_warmup_s, sampler=sampler, min_window_s=min_window_s)
        if m.valid and m.noisy:  # docs/design.md, "Noisy samples": measured once more
            announce_doing(progress, f"{label}: CV {m.cv:.0%}, measuring again")
            case.reset()
            first_cv = m.cv
            m = measure_case(
                case,
                kernel,
                reps=reps,
                max_warmup_s=max_warmup_s,
                sampler=sampler,
                min_window_s=min_window_s,
                extra={REMEASURED_PARAM: round(first_cv, 4)},
            )
        journal.record(key, m.to_dict())
        measurements.append(m)
        if clock is not None:
            clock.measured += 1
        suite.record(m)
        if progress:
            progress.advance(
                f"{label}: {rate_words(m)}"
                + ("" if m.valid else " INVALID")
                + (f" (noisy: CV {m.cv:.0%})" if m.valid and m.noisy else "")
            )


def run_roofline(
    device: Union[str, DeviceSpec, None] = None,
    suites: Optional[Sequence[str]] = None,
    *,
    quick: bool = False,
    reps: int = DEFAULT_REPS,
    array_bytes: Optional[int] = None,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
    telemetry: bool = True,
    power_window: bool = False,
    tuner: Optional[Tuner] = None,
    sustain_s: float = 0.0,
    budget: Budgets = None,
    journal: Optional[Journal] = None,
) -> Run:
    """Measure ``device`` ("cpu", "cuda:0", "metal:0" or a DeviceSpec; default: the best available)
    with ``suites`` (default: the registry's default suites,
    :func:`~apple_roofline.suites.registry.default_suites`, in the forms each takes unnamed, e.g.
    matrix's largest tile per precision and instruction; the opt-in suites and the named forms only
    when named) and return the Run with its ceilings.

    ``array_bytes`` is the size of each STREAM array in bytes (default: default_array_bytes);
    ``quick`` trims the sweep to F = 1, 4 … 1024 and shortens time budgets (under a minute on a
    2-core machine); ``reps`` is the samples per measurement; ``progress`` receives one stage per
    suite; ``command`` is the command line to record. ``telemetry`` samples clocks and power in the
    background (docs/design.md, "Clocks and power": NVML on CUDA GPUs, RAPL and cpufreq on Linux
    CPUs) and attaches them to each measurement; ``device["telemetry"]`` records the sampler, or why
    none read. A sampler that cannot read never fails the run. ``power_window`` lengthens every
    measurement's timed samples to the sampler's :attr:`~apple_roofline.telemetry.Sampler.power_window_s`
    (twice its power averaging), so that each gets power; off by default, as it slows a run (with
    NVML's 1-s average, by about 2 s per measurement). ``sustain_s`` > 0 (at most
    :data:`MAX_SUSTAIN_S`) makes every measurement's timed samples last at least that many seconds,
    so that it reports the sustained rate, after the power and thermal controllers have acted, not
    the burst a short measurement sees (docs/design.md, "Clocks and power"). ``tuner`` chooses each kernel's block
    size before its suite is measured (docs/design.md, "Threadgroup-size tuning"); every
    measurement records the size its kernel ran at as the parameter ``block`` (where it has one).
    ``budget`` sets the seconds each suite may take (:func:`~.budget.suite_budgets`: ``"none"``,
    ``"gemm=120"`` or a mapping; default :func:`~.budget.default_budgets`, none when ``sustain_s`` or
    ``power_window`` lengthen every measurement): checked before each case, a spent budget leaves
    the suite's remaining cases unmeasured, warned about and marked in the run's ``suite_times``
    (docs/design.md, "Time budgets"), which record every suite's seconds. ``journal`` keeps each
    measurement as it finishes (:class:`~apple_roofline.study.journal.Journal`, docs/design.md,
    "Journal and resume"); a measurement its resumed journal holds is kept, not measured again, and
    the run's ``resumed`` says which.

    Raises:
        OptionError: (a ValueError) a bad option, before anything is measured: ``device`` malformed
            or not available, an unknown suite, ``reps`` outside 1 to 10000, ``array_bytes``
            outside :func:`array_bytes_range`, ``sustain_s`` outside 0 to :data:`MAX_SUSTAIN_S`,
            a malformed ``budget`` or one outside (0, 3600] seconds; (option ``resume``) a resumed
            journal of another device or other options; after measuring, suites of which this
            device runs no kernel (``matrix`` on a CPU): nothing was measured.
        _core.BackendError: subclasses, for device failures.
        RunInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial Run.
    """
    suite_names = registry.default_suites() if suites is None else parse_suites(suites)
    reps = check_reps(reps)
    sustain_s = check_sustain(sustain_s)
    budgets = suite_budgets(suite_names, quick, "none" if budget is None and (sustain_s or power_window) else budget)
    spec = resolve_device(device)
    backend = open_device(spec)
    info = dict(backend.info())
    array_bytes = check_array_bytes(default_array_bytes(info) if array_bytes is None else array_bytes, info)
    options: Dict[str, Any] = {
        "max_launch_s": 0.01 if quick else 0.05,
        "gemm_max_launch_s": 0.03 if quick else 0.25,
        **registry.suite_options(suites is not None),  # each suite's sweep form, named or default (its spec)
    }
    max_warmup_s = 0.05 if quick else 0.5
    ctx = SuiteContext(backend, str(info["backend"]), info, quick, array_bytes, options)
    # a CPU's measured clock is read again after each suite and the peaks rest on the readings'
    # robust estimate (docs/design.md, "Theoretical ceilings")
    cpu_clock = RunClock(host_cpu_spec()) if info.get("backend") == "cpu" else None
    if cpu_clock is not None:
        cpu_clock.take()  # a second at the start: a one-suite run still has three readings
    device_desc, theoretical = cpu_clock.theoretical() if cpu_clock is not None else device_theoretical(info)
    created = provenance.now()
    journal = journal or Journal()
    journal.begin(
        Run,
        created=created,
        device={**info, **device_desc},
        command=command,
        options={
            "suites": list(suite_names),
            "quick": quick,
            "reps": reps,
            "array_bytes": array_bytes,
            "sustain_s": sustain_s,
            "power_window": power_window,
            "budgets_s": budgets,
            "tune": tuner.describe() if tuner is not None else None,
            "telemetry": telemetry,
        },
        flags=OPTION_FLAGS,
    )

    measurements: List[Measurement] = []
    skipped: List[Skipped] = []
    times: List[SuiteTime] = []
    sampler = sampler_for(spec.backend, spec.index, info) if telemetry else NullSampler("telemetry turned off")
    cache_warnings = CacheWarnings()

    def assemble(complete: bool) -> Run:
        warnings: List[str] = []
        warnings += [f"{m.label} failed validation: {m.validation}" for m in measurements if not m.valid]
        warnings += cv_warnings(measurements)
        if any(m.ceiling_class == "Cache bandwidth" for m in measurements):
            warnings.append(
                f"STREAM arrays of {format_size(array_bytes)} are smaller than 4x the last-level cache "
                f"({format_size(int(info.get('llc_bytes', 0) or 0))}): the bandwidth ceiling measures caches, not DRAM"
            )
        if any(m.params.get("shrunk") for m in measurements):
            warnings.append("sweep points marked shrunk ran on a smaller working set once the kernel was compute-bound")
        warnings += ladder_warnings(measurements)
        warnings += [w for w in map(cut_warning, times) if w]
        warnings += cache_warnings.new()  # docs/design.md, "The kernel cache"
        marked, steady = mark_steady(measurements)  # docs/design.md, "Clocks": the run's steady clock
        desc, peaks = cpu_clock.theoretical(marked) if cpu_clock is not None else (device_desc, theoretical)
        warnings += clock_warnings(desc)
        # every figure against the physical limit of what it is labelled with (docs/design.md, "Physical limits")
        marked = check_limits(marked, peaks, {**info, **desc})
        warnings += limit_warnings(marked)
        warnings += registry.suite_warnings(marked)  # the suites' own rules (docs/design.md, "The memory hierarchy")
        below = below_steady(marked)
        if below and steady is not None:
            warnings.append(
                f"{len(below)} measurement(s) ran more than {CLOCK_TOLERANCE:.0%} under the run's steady "
                f"clock of {steady:.0f} MHz (marked clock=below steady): "
                + ", ".join(sorted({m.label for m in below})[:8])
                + (", ..." if len(below) > 8 else "")
            )
        return Run(
            finished=provenance.now(),
            tool=ToolInfo.current(),
            created=created,
            host=provenance.host(),
            device={
                **info,
                **desc,
                "array_bytes": array_bytes,
                "quick": quick,
                "reps": reps,
                "telemetry": {**sampler.describe(), **({"power_window_s": window_s} if window_s else {})},
                **({"sustain_s": sustain_s} if sustain_s else {}),
                **({"steady_clock_mhz": round(steady, 1)} if steady is not None else {}),
                **registry.device_facts(suite_names, info),
                **({"tune": tuner.describe()} if tuner is not None else {}),
            },
            command=tuple(command),
            measurements=marked,
            ceilings=tuple(derive_ceilings(marked)) + tuple(peaks),
            skipped=tuple(skipped),
            warnings=tuple(warnings),
            complete=complete,
            conventions=CONVENTIONS,
            suite_times=tuple(times),
            resumed=journal.resumed(),
        )

    sampler.start()
    window_s = max(sampler.power_window_s if power_window and sampler.active else 0.0, sustain_s)
    announce_plan(progress, suite_names, [budgets[name] for name in suite_names])
    try:
        for name in suite_names:
            blocks = tuner.blocks(ctx, name, progress) if tuner is not None else {}
            suite_options = {**ctx.options, BLOCKS_OPTION: dict(blocks)} if blocks else ctx.options
            suite = registry.spec(name).measure(dataclasses.replace(ctx, options=suite_options))
            planned = suite.total()
            if progress:
                progress.start(name, planned)
            clock = SuiteClock(name, budgets[name], planned)
            try:
                _run_suite(
                    suite,
                    reps=reps,
                    max_warmup_s=max_warmup_s,
                    measurements=measurements,
                    skipped=skipped,
                    progress=progress,
                    sampler=sampler,
                    min_window_s=window_s,
                    clock=clock,
                    journal=journal,
                )
            finally:
                times.append(clock.record())
            if cpu_clock is not None:
                cpu_clock.take()  # between suites, and after the last one (about 50 ms)
            if progress:
                progress.finish(name, clock.progress_note())
    except (KeyboardInterrupt, DeviceStopped) as exc:
        sampler.stop()
        raise RunInterrupted(assemble(False), exc) from None
    finally:
        sampler.stop()
        journal.close()
    if not measurements:  # every kernel of the suites asked for is one this device cannot run
        cut = [t.suite for t in times if t.cut]
        raise OptionError(
            "suites",
            ",".join(suite_names),
            "suites with a kernel this device runs",
            problem=f"cannot run on {info.get('name', spec)}",
            shown=",".join(suite_names),
            reason=reasons_text([s.reason for s in skipped])
            or (
                f"the time budget of {', '.join(cut)} ran out before its first case (raise it with "
                "--budget SUITE=SECONDS)"
                if cut
                else "no case to measure"
            ),
        )
    return assemble(True)


def cv_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One warning per valid measurement whose CV exceeds :data:`~apple_roofline.stats.CV_WARN`
    (5 %); one above :data:`~apple_roofline.stats.NOISY_CV` (50 %) says it stayed that noisy when
    measured again (docs/design.md, "Noisy samples")."""
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


def rate_words(m: Measurement) -> str:
    """A measurement's rates for a progress line: GFLOP/s where it counts FLOPs and is no bandwidth
    kernel, GB/s where it counts bytes and is no compute kernel (a peak kernel's few bytes say
    nothing, nor a STREAM triad's two FLOPs an element), power where sampled: ``"113.0 GFLOP/s"``,
    ``"21.2 GB/s"``, ``"2.3 GFLOP/s, 13.8 GB/s, 41 W"`` (a sweep point)."""
    parts = [f"{m.gflops:.1f} GFLOP/s"] if m.flops > 0 and m.ceiling_kind != "bandwidth" else []
    if m.bytes > 0 and (m.ceiling_kind != "compute" or not parts):
        parts.append(f"{m.gbps:.1f} GB/s")
    if m.power_w is not None:
        parts.append(f"{m.power_w:.0f} W")
    return ", ".join(parts)


def ladder_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One warning per disturbed GEMM size (:func:`.ladder.disturbed_gemms`): one that ran more than
    :data:`.ladder.LADDER_DROP` times below the rate of the size before it. The point stays in the
    run, as measured."""
    out: List[str] = []
    for i, p in disturbed_gemms(measurements).items():
        m, before = measurements[i], measurements[p]
        out.append(
            f"{m.label} {params_summary(m.params)} ran at {m.gflops:.3g} GFLOP/s, more than {LADDER_DROP:g}x below "
            f"{params_summary(before.params)} ({before.gflops:.3g} GFLOP/s): a disturbed measurement, not a ceiling"
        )
    return out


def params_summary(params: Mapping[str, Any]) -> str:
    """The size parameters of a measurement for messages: ``"F=64 n=1048576"`` (F, m and n, and the
    rule suites' level, stride and threadgroup_bytes)."""
    keys = [k for k in ("F", "m", "n", "level", "stride", "threadgroup_bytes") if k in params]
    return " ".join(f"{k}={params[k]}" for k in keys)
