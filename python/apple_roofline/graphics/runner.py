"""Runs the graphics suites on one GPU and assembles a :class:`~.model.GraphicsStudy`.

The passes come from a grid (:mod:`.grid`: ``default``, ``quick`` or ``full``, any axis replaceable).
Each suite runs against a time budget (:func:`~.grid.graphics_budgets`, checked before each pass:
a spent budget leaves the suite's remaining passes unmeasured, recorded in ``suite_times`` and
warned about). Each pass is timed at the GPU's loaded clock by :class:`~.pacing.Pacer` (one
submission of lead passes and samples; batches divided by their count; calibration shared by passes
of the same shape), then its target is read back and compared with the NumPy reference
(:mod:`.kernels`) on a worker thread (:mod:`.checks`) while the next pass runs; a pass that fails is
kept, marked invalid, and makes the command exit 1. Every pass carries the clocks and power of its
timed samples and, once the study is done, whether it ran at the study's steady clock
(:mod:`.steady`).

Options are checked in :mod:`.options` (its checks are re-exported here for the command line), the
passes built, timed and queued for checking in :mod:`.passes` (layers, calibration).

Devices: ``wgpu:N`` (the N-th wgpu adapter: Vulkan, Metal, D3D12); ``metal:N``, the native Metal
render passes, is built on macOS only (docs/design.md, "The graphics study").
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from .. import provenance
from ..clocks import CLOCK_TOLERANCE, below_steady, mark_steady
from ..errors import DeviceStopped, check_int, nothing_measured
from ..measure import check_reps
from ..stats import CV_WARN
from ..study.budget import Budgets
from ..study.document import ToolInfo
from ..study.journal import Journal
from ..study.progress import Progress, StudyInterrupted
from ..study.timing import SuiteClock, SuiteTime, cut_warning
from ..telemetry import NullSampler
from ..telemetry.choose import graphics_sampler
from .checks import Checks
from .grid import GRIDS, Grid, build_grid, graphics_budgets
from .kernels import DEFAULT_OVERDRAW, FILTERS, HEIGHT, PATTERNS, SUITES, WIDTH
from .model import GraphicsStudy, describe_case
from .options import (
    MAX_OVERDRAW,
    check_f_values,
    check_fetches,
    check_sizes,
    parse_choices,
    parse_graphics_device,
    parse_resolution,
)
from .pacing import MIN_SAMPLE_S, SPIN_UP_S, Pacer
from .passes import PassMeasurer, fitting
from .wedged import WEDGED_GPU_HINT, wedged_gpu_suspected

__all__ = [
    "MAX_OVERDRAW",
    "GraphicsInterrupted",
    "parse_graphics_device",
    "parse_resolution",
    "parse_choices",
    "check_f_values",
    "check_sizes",
    "check_fetches",
    "open_graphics_device",
    "run_graphics",
]


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


def run_graphics(
    device: str = "wgpu:0",
    suites: Optional[Sequence[str]] = None,
    *,
    overdraw: int = DEFAULT_OVERDRAW,
    f_values: Optional[Sequence[int]] = None,
    patterns: Optional[Sequence[str]] = None,
    sizes: Optional[Sequence[int]] = None,
    fetches: Optional[Sequence[int]] = None,
    filters: Optional[Sequence[str]] = None,
    width: int = WIDTH,
    height: int = HEIGHT,
    quick: bool = False,
    grid: Optional[str] = None,
    reps: int = 10,
    max_pass_s: Optional[float] = None,
    budget: Budgets = None,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
    telemetry: bool = True,
    journal: Optional[Journal] = None,
) -> GraphicsStudy:
    """Measure the graphics suites (``fillrate``, ``tilemem``, ``texture``; default all) on ``device``.

    Args:
        device: ``"wgpu:N"`` or ``"metal:N"`` (:func:`parse_graphics_device`).
        overdraw: layers per fill pass (1 to :data:`MAX_OVERDRAW`).
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
            (docs/design.md, "Clocks and power": the Apple sampler on a Mac, NVML for an NVIDIA
            adapter, RAPL for a CPU adapter on Linux); each pass's measurement gets the clocks and
            power of its timed samples, ``clock`` (``"steady"`` or ``"below steady"``, :mod:`.steady`),
            and ``device["telemetry"]`` records the sampler, or why none read. A sampler that cannot
            read never fails the study.
        journal: keeps each pass once it is checked (docs/design.md, "Journal and resume"); a
            pass its resumed journal holds is kept, not measured again.

    Raises:
        OptionError: a bad option (the message names the parameter and its range); (option
            ``resume``) a resumed journal of another device or other options.
        WgpuUnavailable: wgpu is not installed or has no such adapter (wgpu devices).
        CannotMeasure: the device ran none of the passes (each skipped, with its reason).
        GraphicsInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    api, index = parse_graphics_device(device)
    names = parse_choices(suites or SUITES, "suites", SUITES, "graphics suite")
    overdraw = check_int(overdraw, "overdraw", 1, MAX_OVERDRAW)
    grid_name = parse_choices(grid, "grid", GRIDS, "graphics grid")[0] if grid else ("quick" if quick else "default")
    quick = quick or grid_name == "quick"
    plan = build_grid(
        grid_name,
        f_values=check_f_values(list(f_values)) if f_values is not None else None,
        patterns=parse_choices(patterns, "patterns", PATTERNS, "texture pattern") if patterns is not None else None,
        sizes=check_sizes(list(sizes)) if sizes is not None else None,
        fetches=check_fetches(list(fetches)) if fetches is not None else None,
        filters=parse_choices(filters, "filters", FILTERS, "texture filter") if filters is not None else None,
    )
    for name, v in (("width", width), ("height", height)):
        check_int(v, name, 16, 16384)
    reps = check_reps(reps)
    budgets = graphics_budgets(names, grid_name, budget)
    pass_limit = max_pass_s if max_pass_s is not None else (0.01 if quick else 0.02)
    gpu = open_graphics_device(api, index)
    created = provenance.now()
    sampler = (
        graphics_sampler(api, {"name": gpu.name, **gpu.info}) if telemetry else NullSampler("telemetry turned off")
    )
    pacer = Pacer(
        sampler,
        reps=reps,
        min_sample_s=MIN_SAMPLE_S / 5 if quick else MIN_SAMPLE_S,
        spin_up_s=SPIN_UP_S / 4 if quick else SPIN_UP_S,
    )
    journal = journal or Journal()
    measuring = PassMeasurer(gpu, pacer, Checks(), width, height, overdraw, pass_limit, journal)
    params: Dict[str, Any] = {
        "suites": list(names),
        "grid": grid_name,
        "width": width,
        "height": height,
        "overdraw": overdraw,
        "quick": quick,
        "api": api,
        "f": sorted({c[1] for c in plan.fillrate}),
        "patterns": sorted({c[1] for c in plan.texture}),
        "sizes": sorted({c[0] for c in plan.texture}),
        "fetches": sorted({c[3] for c in plan.texture}),
        "filters": sorted({c[2] for c in plan.texture}),
        "reps": reps,
        "spin_up_s": pacer.spin_up_s,
        "min_sample_s": pacer.min_sample_s,
        "budgets_s": dict(budgets),
        "clock_tolerance": CLOCK_TOLERANCE,
    }
    journal.begin(
        GraphicsStudy,
        created=created,
        device={"name": gpu.name, **gpu.info},
        command=command,
        options={**params, "telemetry": telemetry, "max_pass_s": pass_limit},
    )
    times: List[SuiteTime] = []

    def assemble(complete: bool) -> GraphicsStudy:
        measurements, steady = mark_steady(measuring.collect())
        warns = list(measuring.warnings)
        warns += [w for w in map(cut_warning, times) if w]
        below = below_steady(measurements)
        if below:
            named = ", ".join(m.label + " " + describe_case(m.params) for m in below[:6])
            warns.append(
                f"{len(below)} of {len(measurements)} passes ran below the steady clock "
                f"({steady:.0f} MHz less {CLOCK_TOLERANCE:.0%}): {named}" + (" …" if len(below) > 6 else "")
            )
        for m in measurements:
            if not m.valid:
                warns.append(f"{m.label} {describe_case(m.params)} failed validation: {m.validation}")
            elif m.cv > CV_WARN:
                warns.append(f"{m.label} {describe_case(m.params)}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
        study_params = {
            **params,
            **({"steady_clock_mhz": round(steady, 1)} if steady is not None else {}),
            "probes": pacer.probes,
            "retries": pacer.retries,
        }
        return GraphicsStudy(
            tool=ToolInfo.current(),
            created=created,
            host=provenance.host(),
            device={"name": gpu.name, **gpu.info, "telemetry": sampler.describe()},
            command=tuple(command),
            params=study_params,
            measurements=measurements,
            skipped=tuple(measuring.skipped),
            warnings=tuple(warns),
            complete=complete,
            finished=provenance.now(),
            suite_times=tuple(times),
            resumed=journal.resumed(),
        )

    cases: Dict[str, Callable[[SuiteClock], Iterator[str]]] = {
        "fillrate": lambda clock: measuring.fill_cases("fillrate", plan.fillrate, clock),
        "tilemem": lambda clock: measuring.fill_cases("tilemem", plan.tilemem, clock),
        "texture": lambda clock: measuring.texture_cases(plan.texture, clock),
    }
    sampler.start()
    clock: Optional[SuiteClock] = None
    try:
        for name in names:
            planned = _count(plan, name, gpu)
            if progress:
                progress.start(name, planned)
            clock = SuiteClock(name, budgets[name], planned)
            for desc in cases[name](clock):
                if progress:
                    progress.advance(desc)
            measuring.settle()  # a suite's seconds include checking its passes
            times.append(clock.record())
            note, clock = clock.progress_note(), None
            if progress:
                progress.finish(name, note)
    except (KeyboardInterrupt, DeviceStopped) as exc:
        if clock is not None:
            times.append(clock.record())
        sampler.stop()
        measuring.checks.close(finish=False)
        journal.close()
        partial = assemble(False)
        if isinstance(exc, DeviceStopped) and not partial.measurements and wedged_gpu_suspected(gpu.info):
            exc = DeviceStopped(exc.pass_name, exc.bound_s, WEDGED_GPU_HINT)
        raise GraphicsInterrupted(partial, exc) from None
    finally:
        sampler.stop()
    measuring.checks.close()
    journal.close()
    study = assemble(True)
    if not study.measurements:  # the device drew none of the passes asked for
        raise nothing_measured(f"{gpu.name} ran none of the passes", [s.reason for s in study.skipped])
    return study


def _count(plan: Grid, suite: str, dev: Any) -> int:
    return len(fitting(plan.texture, dev)) if suite == "texture" else plan.cases(suite)
