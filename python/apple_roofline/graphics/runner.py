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

Layers: a fill pass draws ``overdraw`` layers unless one pass would take longer than ``max_pass_s``;
then fewer (a power of two, at least :data:`MIN_LAYERS`), said in its ``layers`` parameter and a
warning: rates per pixel do not depend on the layer count. A texture pass draws as many identical
layers (a power of two up to :data:`MAX_TEXTURE_LAYERS`) as make it about :data:`TARGET_PASS_S` long,
where the device counts fragment-shader invocations (the count, not the layer count, gives the
texels fetched); elsewhere one layer.

Devices: ``wgpu:N`` (the N-th wgpu adapter: Vulkan, Metal, D3D12); ``metal:N``, the native Metal
render passes, is built on macOS only (docs/design.md, "The graphics study").
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Hashable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .. import provenance
from ..errors import OptionError, check_int
from ..measure import check_reps
from ..roofline.records import Measurement, Skipped
from ..stats import CV_WARN
from ..study.budget import Budgets
from ..study.document import ToolInfo
from ..study.progress import Progress, StudyInterrupted
from ..study.timing import SuiteClock, SuiteTime, cut_warning
from ..telemetry import NullSampler
from ..telemetry.choose import graphics_sampler
from .checks import Checks, result_or
from .grid import GRIDS, FillCase, Grid, TextureCase, build_grid, graphics_budgets
from .kernels import (DEFAULT_OVERDRAW, FILTERS, FLOPS_PER_ITERATION, FORMATS, HEIGHT, MAX_F, PATTERNS, SUITES,
                      TEXTURE_FORMAT, WIDTH, check_target, fill_reference, texture_noise, texture_sums)
from .model import GraphicsStudy
from .pacing import MIN_SAMPLE_S, SPIN_UP_S, Pacer, PassRun, PassTiming
from .steady import BELOW, CLOCK_TOLERANCE, below_steady, mark_steady

__all__ = ["MIN_LAYERS", "MAX_OVERDRAW", "MAX_FETCHES", "MAX_TEXTURE_LAYERS", "TARGET_PASS_S", "SPIN_UP_S",
           "MIN_SAMPLE_S", "GraphicsInterrupted", "parse_graphics_device", "parse_resolution", "parse_choices",
           "check_f_values", "check_sizes", "check_fetches", "open_graphics_device", "fill_layers",
           "texture_layers", "run_graphics"]

#: The fewest layers a long fill pass is reduced to (one layer of 1920 x 1080 is ample parallel work;
#: on an H100, whose graphics run on two TPCs, one layer at F = 512 takes 20 ms).
MIN_LAYERS = 1
#: The most layers of overdraw.
MAX_OVERDRAW = 4096
#: The most fetches per pixel.
MAX_FETCHES = 64
#: The most layers of a texture pass.
MAX_TEXTURE_LAYERS = 64
#: Seconds a texture pass is drawn long enough to take (layers), so that a sample is a handful of
#: passes and the host encodes few of them.
TARGET_PASS_S = 1e-3
#: How many texture lines (size, pattern, filter) ahead of the pass being measured their references
#: are started.
AHEAD = 4
_DEVICE = re.compile(r"^(wgpu|metal)(?::([0-9]+))?$")


class GraphicsInterrupted(StudyInterrupted[GraphicsStudy]):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    MESSAGE = "graphics study interrupted"


def parse_graphics_device(text: str) -> Tuple[str, int]:
    """``"wgpu:1"`` -> ``("wgpu", 1)``; ``"wgpu"`` is adapter 0; ``"metal:N"`` the native path.

    Raises:
        OptionError: (option ``device``) any other name.
    """
    m = _DEVICE.match(text.strip().lower())
    if not m:
        raise OptionError("device", text, "wgpu:N (a wgpu adapter) or metal:N", problem="is not a graphics device")
    return m.group(1), int(m.group(2) or 0)


def parse_resolution(text: str) -> Tuple[int, int]:
    """``"1920x1080"`` -> (1920, 1080).

    Raises:
        OptionError: (option ``resolution``) not WIDTHxHEIGHT with each side 16 to 16384.
    """
    m = re.fullmatch(r"\s*([0-9]+)\s*[xX]\s*([0-9]+)\s*", text)
    if not m or not all(16 <= int(v) <= 16384 for v in m.groups()):
        raise OptionError("resolution", text, "WIDTHxHEIGHT, each 16 to 16384", problem="is not a resolution")
    return int(m.group(1)), int(m.group(2))


def parse_choices(text: Union[str, Sequence[str]], option: str, valid: Sequence[str],
                  noun: str = "choice") -> Tuple[str, ...]:
    """A comma-separated list (or a sequence) of names from ``valid`` (each a ``noun``), in
    ``valid``'s order.

    Raises:
        OptionError: (``option``) an unknown name or an empty list.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [s.strip().lower() for s in items if s.strip()]
    if not names:
        raise OptionError(option, text, ", ".join(valid), problem="names nothing")
    for n in names:
        if n not in valid:
            raise OptionError(option, n, ", ".join(valid), problem=f"is not a {noun}", shown=repr(n))
    return tuple(v for v in valid if v in names)


def check_f_values(values: Sequence[Any]) -> Tuple[int, ...]:
    """FMA iterations per pixel, each 0 to :data:`MAX_F`, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``f``) a value that is not an integer in range, or none.
    """
    if not values:
        raise OptionError("f", "", f"integers 0 to {MAX_F}", problem="names no value")
    return tuple(sorted({check_int(v, "f", 0, MAX_F) for v in values}))


def check_sizes(values: Sequence[Any]) -> Tuple[int, ...]:
    """Texture sizes (texels on a side), each a power of two from 4 to 16384, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``sizes``) none, or a value that is not such a power of two.
    """
    valid = "powers of two, 4 to 16384"
    if not values:
        raise OptionError("sizes", "", valid, problem="names no value")
    out = set()
    for v in values:
        n = check_int(v, "sizes", 4, 16384)
        if n & (n - 1):
            raise OptionError("sizes", v, valid, problem="is not a power of two")
        out.add(n)
    return tuple(sorted(out))


def check_fetches(values: Sequence[Any]) -> Tuple[int, ...]:
    """Fetches per pixel, each 1 to :data:`MAX_FETCHES`, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``fetches``) none, or a value that is not an integer in range.
    """
    if not values:
        raise OptionError("fetches", "", f"integers 1 to {MAX_FETCHES}", problem="names no value")
    return tuple(sorted({check_int(v, "fetches", 1, MAX_FETCHES) for v in values}))


def open_graphics_device(api: str, index: int) -> Any:
    """Open ``wgpu:index`` (:class:`~.wgpu_device.WgpuDevice`) or ``metal:index``
    (:class:`~.native_device.NativeGraphicsDevice`).

    Raises:
        WgpuUnavailable: wgpu is not installed or has no such adapter.
        OptionError: (option ``device``) no Metal backend in this build, or no such Metal device.
    """
    if api == "wgpu":
        from .wgpu_device import WgpuDevice

        return WgpuDevice(index)
    from .native_device import NativeGraphicsDevice

    return NativeGraphicsDevice(index)


def _pow2_floor(x: float) -> int:
    return 1 << int(np.floor(np.log2(max(x, 1.0))))


def fill_layers(overdraw: int, per_layer_s: float, max_pass_s: float) -> int:
    """Layers of a fill pass: ``overdraw``, or, when that many would take longer than ``max_pass_s``
    at ``per_layer_s`` each, the largest power of two that fits, at least :data:`MIN_LAYERS` (and
    never more than ``overdraw``)."""
    if overdraw * per_layer_s <= max_pass_s or overdraw <= MIN_LAYERS:
        return overdraw
    return min(overdraw, max(MIN_LAYERS, _pow2_floor(max_pass_s / max(per_layer_s, 1e-12))))


def texture_layers(per_layer_s: float, target_s: float = TARGET_PASS_S, cap: int = MAX_TEXTURE_LAYERS) -> int:
    """Layers of a texture pass: the largest power of two whose pass lasts at most ``target_s`` at
    ``per_layer_s`` per layer, 1 to ``cap``."""
    return min(cap, _pow2_floor(target_s / max(per_layer_s, 1e-12)))


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

    Raises:
        OptionError: a bad option (the message names the parameter and its range).
        WgpuUnavailable: wgpu is not installed or has no such adapter (wgpu devices).
        GraphicsInterrupted: on KeyboardInterrupt, with the partial study.
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
        filters=parse_choices(filters, "filters", FILTERS, "texture filter") if filters is not None else None)
    for name, v in (("width", width), ("height", height)):
        check_int(v, name, 16, 16384)
    reps = check_reps(reps)
    budgets = graphics_budgets(names, grid_name, budget)
    pass_limit = max_pass_s if max_pass_s is not None else (0.01 if quick else 0.02)
    gpu = open_graphics_device(api, index)
    created = provenance.now()
    sampler = graphics_sampler(api, {"name": gpu.name, **gpu.info}) if telemetry else NullSampler("telemetry turned off")
    pacer = Pacer(sampler, reps=reps, min_sample_s=MIN_SAMPLE_S / 5 if quick else MIN_SAMPLE_S,
                  spin_up_s=SPIN_UP_S / 4 if quick else SPIN_UP_S)
    measuring = _Measuring(gpu, pacer, Checks(), width, height, overdraw, pass_limit)
    params: Dict[str, Any] = {
        "suites": list(names), "grid": grid_name, "width": width, "height": height, "overdraw": overdraw,
        "quick": quick, "api": api, "f": sorted({c[1] for c in plan.fillrate}),
        "patterns": sorted({c[1] for c in plan.texture}), "sizes": sorted({c[0] for c in plan.texture}),
        "fetches": sorted({c[3] for c in plan.texture}), "filters": sorted({c[2] for c in plan.texture}),
        "reps": reps, "spin_up_s": pacer.spin_up_s, "min_sample_s": pacer.min_sample_s,
        "budgets_s": dict(budgets), "clock_tolerance": CLOCK_TOLERANCE}
    times: List[SuiteTime] = []

    def assemble(complete: bool) -> GraphicsStudy:
        measurements, steady = mark_steady(measuring.collect())
        warns = list(measuring.warnings)
        warns += [w for w in map(cut_warning, times) if w]
        below = below_steady(measurements)
        if below:
            warns.append(f"{len(below)} of {len(measurements)} passes ran below the steady clock "
                         f"({steady:.0f} MHz less {CLOCK_TOLERANCE:.0%}): {', '.join(m.label + ' ' + _describe(m.params) for m in below[:6])}"
                         + (" …" if len(below) > 6 else ""))
        for m in measurements:
            if not m.valid:
                warns.append(f"{m.label} {_describe(m.params)} failed validation: {m.validation}")
            elif m.cv > CV_WARN:
                warns.append(f"{m.label} {_describe(m.params)}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
        study_params = {**params, **({"steady_clock_mhz": round(steady, 1)} if steady is not None else {}),
                        "probes": pacer.probes, "retries": pacer.retries}
        return GraphicsStudy(tool=ToolInfo.current(), created=created, host=provenance.host(),
                             device={"name": gpu.name, **gpu.info, "telemetry": sampler.describe()},
                             command=tuple(command), params=study_params, measurements=measurements,
                             skipped=tuple(measuring.skipped), warnings=tuple(warns), complete=complete,
                             finished=provenance.now(), suite_times=tuple(times))

    cases: Dict[str, Callable[[SuiteClock], Iterator[str]]] = {
        "fillrate": lambda clock: measuring.fill_cases("fillrate", plan.fillrate, clock),
        "tilemem": lambda clock: measuring.fill_cases("tilemem", plan.tilemem, clock),
        "texture": lambda clock: measuring.texture_cases(plan.texture, clock),
    }
    sampler.start()
    clock: Optional[SuiteClock] = None
    try:
        for name in names:
            if progress:
                progress.start(name, _count(plan, name, gpu))
            clock = SuiteClock(name, budgets[name])
            for desc in cases[name](clock):
                if progress:
                    progress.advance(desc)
            measuring.settle()  # a suite's seconds include checking its passes
            times.append(clock.record())
            clock = None
            if progress:
                progress.finish(name)
    except KeyboardInterrupt:
        if clock is not None:
            times.append(clock.record())
        sampler.stop()
        measuring.checks.close(finish=False)
        raise GraphicsInterrupted(assemble(False)) from None
    finally:
        sampler.stop()
    measuring.checks.close()
    return assemble(True)


def _count(plan: Grid, suite: str, dev: Any) -> int:
    if suite != "texture":
        return plan.cases(suite)
    limit = int(getattr(dev, "max_texture", 0) or 0)
    return sum(1 for c in plan.texture if not limit or c[0] <= limit)


class _Measuring:
    """The state of one study's measuring: the device, the pacer, the checks, and what was measured."""

    def __init__(self, dev: Any, pacer: Pacer, checks: Checks, width: int, height: int, overdraw: int,
                 max_pass_s: float) -> None:
        self.dev, self.pacer, self.checks = dev, pacer, checks
        self.width, self.height, self.overdraw, self.max_pass_s = width, height, overdraw, max_pass_s
        self.counting = bool(getattr(dev, "statistics", False))
        self.pending: List[Tuple[Dict[str, Any], Any]] = []  # (fields of a Measurement, its check)
        self.skipped: List[Skipped] = []
        self.warnings: List[str] = []
        self.layers: Dict[Hashable, int] = {}  # layers chosen per shape, shared by the passes of that shape
        self.lines: Dict[Tuple[str, str, int], Tuple[int, float]] = {}  # texture line -> (layers, s per pass)

    def settle(self) -> None:
        """Wait for every check submitted so far."""
        for _fields, future in self.pending:
            if not future.cancelled():
                future.result()

    def collect(self) -> Tuple[Measurement, ...]:
        """The measurements so far, in order, each with its check's verdict (waits for the checks;
        one cancelled by an interrupt is left out)."""
        out = []
        for fields, future in self.pending:
            verdict = result_or(future)
            if verdict is None:
                continue
            ok, why = verdict
            out.append(Measurement(**fields, valid=ok, validation=why))
        return tuple(out)

    def _record(self, suite: str, kernel: str, dtype: str, case: Dict[str, Any], timing: PassTiming, flops: int,
                nbytes: int, timer: str, got: np.ndarray, want: Callable[[], Any],
                compare: Callable[[np.ndarray, Any], Tuple[bool, str]]) -> float:
        params = {**case, "timer": timer, "batch": timing.batch, "lead_s": round(timing.lead_s, 4),
                  **({"retried": True} if timing.retried else {}), **timing.summary}
        fields = dict(suite=suite, kernel=kernel, dtype=dtype, params=params, flops=flops, bytes=max(nbytes, 1),
                      samples_s=timing.samples_s, batch=timing.batch)
        self.pending.append((fields, self.checks.check(got, want, compare)))
        return sorted(timing.samples_s)[len(timing.samples_s) // 2]

    # -- fill rate and tile memory ------------------------------------------------------------

    def fill_cases(self, suite: str, cases: Sequence[FillCase], clock: SuiteClock) -> Iterator[str]:
        """Measure ``cases`` (format, F, mode, store) of ``suite``; yields one line per pass."""
        width, height, dev = self.width, self.height, self.dev
        for fmt, F in dict.fromkeys((c[0], c[1]) for c in cases):  # every reference started ahead
            self.checks.ahead(("fill", F, fmt), _fill_job(width, height, F, fmt))
        for fmt, F, mode, store in cases:
            if clock.spent():
                clock.cut = True
                return
            blended = mode == "blended"
            shape = (fmt, F, mode)
            try:
                layers = self.layers.get(shape)
                per_pass: Optional[float] = None
                if layers is None:
                    probe_layers = min(self.overdraw, MIN_LAYERS)
                    probe = dev.fill_pass(width=width, height=height, fmt=fmt, F=F, layers=probe_layers,
                                          blended=blended, store=store == "store")
                    per_layer = self.pacer.probe(probe) / probe_layers
                    layers = self.layers[shape] = fill_layers(self.overdraw, per_layer, self.max_pass_s)
                    per_pass = per_layer * layers
                    if layers < self.overdraw:
                        self.warnings.append(f"{suite} {fmt} F={F} {mode}: {layers} layers instead of {self.overdraw} "
                                             f"(one pass of {self.overdraw} would take about "
                                             f"{per_layer * self.overdraw * 1e3:.0f} ms)")
                p = dev.fill_pass(width=width, height=height, fmt=fmt, F=F, layers=layers, blended=blended,
                                  store=store == "store")
                timing, run = self.pacer.measure(p, (shape, layers), per_pass, count=True)
                invocations, got = run.invocations, _image(run)
            except Exception as exc:  # noqa: BLE001 - a format or feature the device lacks: a skip with its reason
                self.skipped.append(Skipped(suite, "fill", fmt, f"{mode}, {store}, F={F}: {type(exc).__name__}: "
                                                                f"{_first_line(exc)}"))
                yield f"{fmt} F={F} {mode} {store}: skipped"
                continue
            pixels = width * height
            drawn = pixels * layers
            if blended:
                shaded, shaded_by = drawn, "blended"
            elif invocations is not None:
                shaded, shaded_by = min(invocations, drawn), "counter"
            else:
                shaded, shaded_by = pixels, "one layer at least"
            bpp = FORMATS[fmt].bytes_per_pixel * (2 if blended else 1)
            case: Dict[str, Any] = {
                "F": F, "mode": mode, "store": store, "width": width, "height": height, "layers": layers,
                "overdraw_requested": self.overdraw, "pixels_drawn": drawn, "pixels_shaded": shaded,
                "shaded_by": shaded_by, "tile_bytes_per_pixel": bpp,
                "dram_bytes": pixels * FORMATS[fmt].bytes_per_pixel if store == "store" else 0}
            if invocations is not None:
                case["fragment_invocations"] = invocations
            key = ("fill", F, fmt)
            self.checks.ahead(key, _fill_job(width, height, F, fmt))
            want = self.checks.future(key)

            def compare(got: np.ndarray, want: np.ndarray, fmt: str = fmt,
                        discard: bool = store == "discard") -> Tuple[bool, str]:
                ok, why = check_target(got, want, FORMATS[fmt].storage)
                return ok, (why + " (the pipeline, checked on one pass with store action store)" if discard else why)

            median = self._record(suite, "fill", fmt, case, timing, shaded * FLOPS_PER_ITERATION * F, shaded * bpp,
                                  p.timer, got, want, compare)
            clock.measured += 1
            yield f"{fmt} F={F} {mode} {store}: {drawn / median / 1e9:.1f} GPixel/s drawn"

    # -- texture cache --------------------------------------------------------------------------

    def texture_cases(self, cases: Sequence[TextureCase], clock: SuiteClock) -> Iterator[str]:
        """Measure the texture ``cases`` (size, pattern, filter, fetches) the device allows; yields one
        line per pass. References are built a few (size, pattern, filter) lines ahead."""
        dev, width, height = self.dev, self.width, self.height
        limit = int(getattr(dev, "max_texture", 0) or 0)
        fits = [c for c in cases if not limit or c[0] <= limit]
        for size in sorted({c[0] for c in cases if c not in fits}):
            self.skipped.append(Skipped("texture", "texture", TEXTURE_FORMAT,
                                        f"size {size}x{size} exceeds the device's largest 2D texture ({limit})"))
        lines = list(dict.fromkeys((c[0], c[1], c[2]) for c in fits))
        counts = {line: sorted({c[3] for c in fits if c[:3] == line}) for line in lines}
        last = {line: max(i for i, c in enumerate(fits) if c[:3] == line) for line in lines}

        def noise(size: int) -> np.ndarray:
            image: np.ndarray = self.checks.reference(("noise", size), _noise_job(size))
            return image

        def sums_job(line: Tuple[int, str, str], texture: Callable[[], Any]) -> Callable[[], Dict[int, np.ndarray]]:
            return lambda: texture_sums(texture(), width, height, line[1], line[2], counts[line])

        def start(i: int) -> None:
            for line in lines[i:i + 2 * AHEAD]:  # textures first: the measuring thread needs them next
                self.checks.ahead(("noise", line[0]), _noise_job(line[0]))
            for line in lines[i:i + AHEAD]:
                if ("texture",) + line in self.checks:
                    continue
                # The job holds the texture's own future, submitted before it: a worker never waits for
                # work queued behind it.
                self.checks.ahead(("texture",) + line, sums_job(line, self.checks.future(("noise", line[0]))))

        for i, (size, pattern, filter_, fetches) in enumerate(fits):
            if clock.spent():
                clock.cut = True
                return
            line = (size, pattern, filter_)
            start(lines.index(line))
            try:
                texture = noise(size)
                bilinear, random = filter_ == "bilinear", pattern == "random"
                shape = (size, pattern, filter_, fetches)
                # The line (pattern, filter, fetches) shares its layers and per-pass time from one size to
                # the next (a cliff changes it, and the next measurement recalibrates); its first size
                # is probed.
                known = self.lines.get(shape[1:])
                layers, per_pass = known if known is not None else (1, None)
                if known is None and self.counting:
                    one = dev.texture_pass(width=width, height=height, texture=texture, fetches=fetches,
                                           random=random, bilinear=bilinear, layers=1)
                    per_layer = self.pacer.probe(one)
                    layers = texture_layers(per_layer)
                    per_pass = per_layer * layers
                p = dev.texture_pass(width=width, height=height, texture=texture, fetches=fetches, random=random,
                                     bilinear=bilinear, layers=layers)
                timing, run = self.pacer.measure(p, shape, per_pass, count=self.counting)
                invocations, got = run.invocations, _image(run)
                self.lines[shape[1:]] = (layers, sorted(timing.samples_s)[len(timing.samples_s) // 2])
            except Exception as exc:  # noqa: BLE001 - e.g. a device that cannot render into rgba32float
                self.skipped.append(Skipped("texture", "texture", TEXTURE_FORMAT,
                                            f"{size}x{size} {pattern} {filter_} x{fetches}: {type(exc).__name__}: "
                                            f"{_first_line(exc)}"))
                yield f"{size}² {pattern} {filter_} x{fetches}: skipped"
                continue
            pixels = width * height
            if invocations is not None:
                shaded, shaded_by = min(invocations, pixels * layers), "counter"
            else:
                shaded, shaded_by = pixels, "one layer"
            texels = shaded * fetches
            case = {"size": size, "pattern": pattern, "filter": filter_, "fetches": fetches, "width": width,
                    "height": height, "layers": layers, "pixels_shaded": shaded, "shaded_by": shaded_by,
                    "texels": texels, "working_set_bytes": size * size * 4}
            want_line = self.checks.future(("texture",) + line)

            def compare(got: np.ndarray, sums: Dict[int, np.ndarray], fetches: int = fetches,
                        bilinear: bool = filter_ == "bilinear") -> Tuple[bool, str]:
                return check_target(got, sums[fetches], "f32", fetches=fetches, bilinear=bilinear)

            median = self._record("texture", "texture", TEXTURE_FORMAT, case, timing, 0,
                                  texels * (16 if filter_ == "bilinear" else 4), p.timer, got, want_line, compare)
            clock.measured += 1
            if i == last[line]:
                self.checks.drop(("texture",) + line)
            if not any(c[0] == size for c in fits[i + 1:]):
                self.checks.drop(("noise", size))
            yield f"{size}² {pattern} {filter_} x{fetches} ({layers} layers): {texels / median / 1e9:.1f} GTexel/s"


def _image(run: PassRun) -> np.ndarray:
    if run.image is None:
        raise RuntimeError("the pass returned no target to validate")
    image: np.ndarray = run.image
    return image


def _fill_job(width: int, height: int, F: int, fmt: str) -> Callable[[], np.ndarray]:
    return lambda: fill_reference(width, height, F, fmt)


def _noise_job(size: int) -> Callable[[], np.ndarray]:
    return lambda: texture_noise(size)


def _describe(params: Mapping[str, Any]) -> str:
    keys = ("F", "mode", "store", "size", "pattern", "filter", "fetches")
    return " ".join(f"{k}={params[k]}" for k in keys if k in params)


def _first_line(exc: BaseException) -> str:
    """The reason a device gave, on one line (wgpu's validation errors span several: the last
    non-empty one names the cause, e.g. "Format Rgba32Float is not renderable")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__
