"""Runs the graphics suites on one GPU and assembles a :class:`~.model.GraphicsStudy`.

Every render pass is timed by the suites' measurement loop (:func:`apple_roofline.measure.time_kernel`:
warm-up, batch calibration to >= 1 ms, samples, median), then its target is read back and compared
with the NumPy reference (:mod:`.kernels`); a pass that fails is kept, marked invalid, and makes the
command exit 1. A fill pass that would take longer than ``max_pass_s`` at the requested overdraw
draws fewer layers (a power of two, at least :data:`MIN_LAYERS`); its ``layers`` parameter says
how many and a warning names it: rates per pixel do not depend on the layer count, and one sample
stays short.

Devices: ``wgpu:N`` (the N-th wgpu adapter: Vulkan, Metal, D3D12); ``metal:N``, the native Metal
render passes, is built on macOS only (docs/design.md, "The graphics study").
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .. import provenance
from ..errors import OptionError, check_int
from ..measure import check_reps, time_kernel
from ..roofline.records import Measurement, Skipped
from ..stats import CV_WARN
from ..study.document import ToolInfo
from ..study.progress import Progress, StudyInterrupted
from ..telemetry import NullSampler
from ..telemetry.choose import graphics_sampler
from .kernels import (DEFAULT_OVERDRAW, FETCHES, FILL_F, FILL_FORMAT, FILTERS, FLOPS_PER_ITERATION, FORMATS, HEIGHT,
                      MAX_F, PATTERNS, QUICK_F, STORES, SUITES, TEXTURE_FORMAT, TEXTURE_SIZES, TILEMEM_F, WIDTH,
                      check_target, fill_reference, texture_noise, texture_sums, MODES)
from .model import GraphicsStudy

__all__ = ["MIN_LAYERS", "MAX_OVERDRAW", "SPIN_UP_S", "MIN_SAMPLE_S", "GraphicsInterrupted", "parse_graphics_device",
           "parse_resolution", "parse_choices", "check_f_values", "open_graphics_device", "run_graphics"]

#: The fewest layers a long fill pass is reduced to.
MIN_LAYERS = 8
#: The most layers of overdraw.
MAX_OVERDRAW = 4096
#: Seconds of back-to-back passes, in one submission, right before each pass's samples (``quick``: a
#: quarter): a GPU idle between passes runs at a low clock and raises it only under sustained load. On an
#: H100 through Vulkan, without it, the same pass came out up to 5.7x slower (345 against 1980 MHz) and
#: changed between runs; with it, two runs agreed (docs/design.md, "The graphics study").
SPIN_UP_S = 0.25
#: The shortest sample (``quick``: a fifth): samples are batches of passes at least this long.
MIN_SAMPLE_S = 0.01
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


def run_graphics(
    device: str = "wgpu:0",
    suites: Optional[Sequence[str]] = None,
    *,
    overdraw: int = DEFAULT_OVERDRAW,
    f_values: Optional[Sequence[int]] = None,
    patterns: Optional[Sequence[str]] = None,
    width: int = WIDTH,
    height: int = HEIGHT,
    quick: bool = False,
    reps: int = 10,
    max_pass_s: Optional[float] = None,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
    telemetry: bool = True,
) -> GraphicsStudy:
    """Measure the graphics suites (``fillrate``, ``tilemem``, ``texture``; default all) on ``device``.

    Args:
        device: ``"wgpu:N"`` or ``"metal:N"`` (:func:`parse_graphics_device`).
        overdraw: layers per fill pass (1 to :data:`MAX_OVERDRAW`).
        f_values: F of the fill-rate sweep (default :data:`~.kernels.FILL_F`, --quick
            :data:`~.kernels.QUICK_F`).
        patterns: texture patterns (default both).
        width, height: the render target (default 1920 x 1080).
        quick: fewer F values, texture sizes and fetch counts, shorter passes.
        reps: samples per pass (1 to 10000).
        max_pass_s: the longest one fill pass may take before its layers are reduced (default
            0.05 s, 0.01 s with ``quick``).
        telemetry: sample clocks and power in the background, as the roofline runner does
            (docs/design.md, "Clocks and power": the Apple sampler on a Mac, NVML for an NVIDIA
            adapter, RAPL for a CPU adapter on Linux); each pass's measurement gets the clocks and
            power of its timed samples and ``device["telemetry"]`` records the sampler, or why none
            read. A sampler that cannot read never fails the study.

    Raises:
        OptionError: a bad option (the message names the parameter and its range).
        WgpuUnavailable: wgpu is not installed or has no such adapter (wgpu devices).
        GraphicsInterrupted: on KeyboardInterrupt, with the partial study.
    """
    api, index = parse_graphics_device(device)
    names = parse_choices(suites or SUITES, "suites", SUITES, "graphics suite")
    overdraw = check_int(overdraw, "overdraw", 1, MAX_OVERDRAW)
    fs = check_f_values(list(f_values) if f_values is not None else list(QUICK_F if quick else FILL_F))
    pats = parse_choices(patterns or PATTERNS, "patterns", PATTERNS, "texture pattern")
    for name, v in (("width", width), ("height", height)):
        check_int(v, name, 16, 16384)
    reps = check_reps(reps)
    budget = max_pass_s if max_pass_s is not None else (0.01 if quick else 0.05)
    gpu = open_graphics_device(api, index)
    created = provenance.now()
    measurements: List[Measurement] = []
    skipped: List[Skipped] = []
    warnings: List[str] = []
    max_warmup_s = 0.05 if quick else 0.5
    spin_s = SPIN_UP_S / 4 if quick else SPIN_UP_S
    min_sample_s = MIN_SAMPLE_S / 5 if quick else MIN_SAMPLE_S
    sampler = graphics_sampler(api, {"name": gpu.name, **gpu.info}) if telemetry else NullSampler("telemetry turned off")
    params = {"suites": list(names), "width": width, "height": height, "overdraw": overdraw, "quick": quick,
              "api": api, "f": list(fs), "patterns": list(pats), "reps": reps, "spin_up_s": spin_s,
              "min_sample_s": min_sample_s}

    def assemble(complete: bool) -> GraphicsStudy:
        warns = list(warnings)
        for m in measurements:
            if not m.valid:
                warns.append(f"{m.label} {_describe(m.params)} failed validation: {m.validation}")
            elif m.cv > CV_WARN:
                warns.append(f"{m.label} {_describe(m.params)}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
        return GraphicsStudy(tool=ToolInfo.current(), created=created, host=provenance.host(),
                             device={"name": gpu.name, **gpu.info, "telemetry": sampler.describe()},
                             command=tuple(command), params=params,
                             measurements=tuple(measurements), skipped=tuple(skipped), warnings=tuple(warns),
                             complete=complete, finished=provenance.now())

    def timed(p: Any, suite: str, kernel: str, dtype: str, case: Dict[str, Any], flops: int, nbytes: int,
              check: Callable[[np.ndarray], Tuple[bool, str]]) -> Measurement:
        timing = time_kernel(p, (), 0, reps=reps, max_warmup_s=max_warmup_s, min_sample_s=min_sample_s,
                             spin_up_s=spin_s)
        t0, t1 = timing.window
        power = sampler.window(t0, t1) if t1 > t0 else {}
        ok, why = check(p.read())
        m = Measurement(suite=suite, kernel=kernel, dtype=dtype, params={**case, "timer": p.timer, **power}, flops=flops,
                        bytes=max(nbytes, 1), samples_s=timing.samples_s, valid=ok, validation=why,
                        batch=timing.batch)
        measurements.append(m)
        return m

    plan: Dict[str, Callable[[], Iterator[str]]] = {
        "fillrate": lambda: _fill_cases(gpu, "fillrate", [(FILL_FORMAT, F, mode, store) for F in fs
                                                          for mode in MODES for store in STORES]),
        "tilemem": lambda: _fill_cases(gpu, "tilemem", [(fmt, F, "opaque", store) for fmt in FORMATS
                                                        for F in (TILEMEM_F if not quick else (0, 128))
                                                        for store in STORES]),
        "texture": lambda: _texture_cases(gpu, quick, pats),
    }
    totals = {"fillrate": len(fs) * len(MODES) * len(STORES),
              "tilemem": len(FORMATS) * (len(TILEMEM_F) if not quick else 2) * len(STORES),
              "texture": len(_texture_grid(gpu, quick, pats)[0])}

    def _fill_cases(dev: Any, suite: str, cases: List[Tuple[str, int, str, str]]) -> Iterator[str]:
        references: Dict[Tuple[int, str], np.ndarray] = {}
        for fmt, F, mode, store in cases:
            blended = mode == "blended"
            try:
                p = dev.fill_pass(width=width, height=height, fmt=fmt, F=F, layers=overdraw, blended=blended,
                                  store=store == "store")
            except Exception as exc:  # noqa: BLE001 - a format or feature the device lacks: a skip with its reason
                skipped.append(Skipped(suite, "fill", fmt, f"{mode}, {store}, F={F}: {type(exc).__name__}: "
                                                           f"{_first_line(exc)}"))
                yield f"{fmt} F={F} {mode} {store}: skipped"
                continue
            layers = overdraw
            one = p.time((), 0, 1, 1)[0]
            if one > budget and overdraw > MIN_LAYERS:
                layers = max(MIN_LAYERS, 1 << int(np.floor(np.log2(max(overdraw * budget / one, 1.0)))))
                layers = min(layers, overdraw)
                p = dev.fill_pass(width=width, height=height, fmt=fmt, F=F, layers=layers, blended=blended,
                                  store=store == "store")
                warnings.append(f"{suite} {fmt} F={F} {mode} {store}: {layers} layers instead of {overdraw} "
                                f"(one pass of {overdraw} took {one * 1e3:.0f} ms)")
            pixels = width * height
            drawn = pixels * layers
            invocations = p.fragment_invocations()
            if blended:
                shaded, shaded_by = drawn, "blended"
            elif invocations is not None:
                shaded, shaded_by = min(invocations, drawn), "counter"
            else:
                shaded, shaded_by = pixels, "one layer at least"
            bpp = FORMATS[fmt].bytes_per_pixel * (2 if blended else 1)
            case = {"F": F, "mode": mode, "store": store, "width": width, "height": height, "layers": layers,
                    "overdraw_requested": overdraw, "pixels_drawn": drawn, "pixels_shaded": shaded,
                    "shaded_by": shaded_by, "tile_bytes_per_pixel": bpp,
                    "dram_bytes": pixels * FORMATS[fmt].bytes_per_pixel if store == "store" else 0}
            if invocations is not None:
                case["fragment_invocations"] = invocations
            key = (F, fmt)
            if key not in references:
                references[key] = fill_reference(width, height, F, fmt)
            want = references[key]

            def check(got: np.ndarray, want: np.ndarray = want, fmt: str = fmt,
                      discard: bool = store == "discard") -> Tuple[bool, str]:
                ok, why = check_target(got, want, FORMATS[fmt].storage)
                return ok, why + ("; checked on one pass of the same pipeline with store action store "
                                  "(discard leaves no image)" if discard else "")

            m = timed(p, suite, "fill", fmt, case, shaded * FLOPS_PER_ITERATION * F, shaded * bpp, check)
            yield (f"{fmt} F={F} {mode} {store}: {drawn / m.median_s / 1e9:.1f} GPixel/s drawn, "
                   f"{m.gflops:.1f} GFLOP/s" + ("" if m.valid else " INVALID"))

    def _texture_cases(dev: Any, quick: bool, pats: Tuple[str, ...]) -> Iterator[str]:
        grid, too_big = _texture_grid(dev, quick, pats)
        for size in too_big:
            skipped.append(Skipped("texture", "texture", "rgba8unorm",
                                   f"size {size}x{size} exceeds the device's largest 2D texture ({dev.max_texture})"))
        textures: Dict[int, np.ndarray] = {}
        sums: Dict[Tuple[int, str, str], Dict[int, np.ndarray]] = {}
        for size, pattern, filter_, fetches in grid:
            if size not in textures:
                textures = {size: texture_noise(size)}
            texture = textures[size]
            try:
                p = dev.texture_pass(width=width, height=height, texture=texture, fetches=fetches,
                                     random=pattern == "random", bilinear=filter_ == "bilinear")
            except Exception as exc:  # noqa: BLE001 - e.g. a device that cannot render into rgba32float
                skipped.append(Skipped("texture", "texture", TEXTURE_FORMAT,
                                       f"{size}x{size} {pattern} {filter_} x{fetches}: {type(exc).__name__}: "
                                       f"{_first_line(exc)}"))
                yield f"{size}² {pattern} {filter_} x{fetches}: skipped"
                continue
            key = (size, pattern, filter_)
            if key not in sums:
                counts = sorted({n for (s2, p2, f2, n) in grid if (s2, p2, f2) == key})
                sums = {key: texture_sums(texture, width, height, pattern, filter_, counts)}
            want = sums[key][fetches]
            texels = width * height * fetches
            case = {"size": size, "pattern": pattern, "filter": filter_, "fetches": fetches, "width": width,
                    "height": height, "texels": texels, "working_set_bytes": size * size * 4}

            def check(got: np.ndarray, want: np.ndarray = want, fetches: int = fetches,
                      bilinear: bool = filter_ == "bilinear") -> Tuple[bool, str]:
                return check_target(got, want, "f32", fetches=fetches, bilinear=bilinear)

            m = timed(p, "texture", "texture", TEXTURE_FORMAT, case, 0, texels * (16 if filter_ == "bilinear" else 4),
                      check)
            yield (f"{size}² {pattern} {filter_} x{fetches}: {texels / m.median_s / 1e9:.1f} GTexel/s"
                   + ("" if m.valid else " INVALID"))

    sampler.start()
    try:
        for name in names:
            if progress:
                progress.start(name, totals[name])
            for desc in plan[name]():
                if progress:
                    progress.advance(desc)
            if progress:
                progress.finish(name)
    except KeyboardInterrupt:
        sampler.stop()
        raise GraphicsInterrupted(assemble(False)) from None
    finally:
        sampler.stop()
    return assemble(True)


def _texture_grid(dev: Any, quick: bool, pats: Tuple[str, ...]) -> Tuple[List[Tuple[int, str, str, int]], List[int]]:
    """The texture passes to measure (size, pattern, filter, fetches), in measuring order, and the
    sizes beyond the device's largest 2D texture."""
    sizes = (64, 256, 1024, 4096) if quick else TEXTURE_SIZES
    fetches = (1, 4, 16) if quick else FETCHES
    limit = int(getattr(dev, "max_texture", 0) or 0)
    fits = [s for s in sizes if not limit or s <= limit]
    grid = [(s, p, f, n) for s in fits for p in pats for f in FILTERS for n in fetches]
    return grid, [s for s in sizes if s not in fits]


def _describe(params: Mapping[str, Any]) -> str:
    keys = ("F", "mode", "store", "size", "pattern", "filter", "fetches")
    return " ".join(f"{k}={params[k]}" for k in keys if k in params)


def _first_line(exc: BaseException) -> str:
    """The reason a device gave, on one line (wgpu's validation errors span several: the last
    non-empty one names the cause, e.g. "Format Rgba32Float is not renderable")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__
