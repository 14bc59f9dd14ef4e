"""Text report of a graphics study: Markdown (and CSV/JSON through the shared formats).

Sections: provenance and settings; the fill-rate roofline (per F, mode and store action: GPixel/s drawn and
shaded, fragment GFLOP/s, how shaded pixels were found) with its two ceilings (the rasteriser/ROP rate at
F = 0 and the fragment ALU rate at the largest F); tile memory (per format: GPixel/s, tile/ROP bytes per pixel
and GB/s, each format against R8 at the same F); the texture cache (GTexel/s and effective GB/s per size,
pattern, filter and fetch count, and the cliffs with their working sets); clocks and power where sampled;
skipped passes; warnings. What the modes mean on a tile-based deferred renderer and on an immediate-mode GPU
is stated in the report itself (docs/design/graphics.md, "The graphics study").
"""

from __future__ import annotations

import csv
import io
import json
from typing import Dict, List, Tuple

from ..roofline.views.report import table_lines
from ..roofline.views.tables import efficiency_table, telemetry_note
from ..study.markdown import end_report, format_report, header_warnings, provenance_lines, skipped_lines, title_lines
from ..study.records import Measurement, format_params
from ..study.timing import TIME_ALIGN, TIME_HEADER, time_notes, time_rows, wall_seconds
from ..text import DASH, key_value_pairs, markdown_table, sig_figs
from ..timing.clocks import BELOW, CLOCK_PARAM, CLOCK_TOLERANCE, below_steady, pass_clock
from .model import (
    GraphicsStudy,
    cliffs,
    describe_case,
    drawn_rate,
    layers_text,
    shaded_note,
    shaded_rate,
    texel_rate,
)

__all__ = [
    "FORMATS",
    "MODE_NOTE",
    "fill_ceilings",
    "tilemem_ratios",
    "clock_cell",
    "steady_note",
    "gpu_note",
    "summary_lines",
    "format_graphics",
]

#: Formats of :func:`format_graphics`.
FORMATS: Tuple[str, ...] = ("md", "csv", "json")

#: What the two fill modes measure, on either kind of GPU.
MODE_NOTE = (
    "Modes. `opaque`: blending off, every layer the same opaque colour. A tile-based deferred renderer "
    "(Apple GPUs) removes hidden surfaces before shading, so it may shade each pixel once however many "
    "layers are drawn: its drawn GPixel/s can exceed what its ALUs could shade (the M5 article's "
    "1,284 GPixel/s at 128x overdraw is one shaded layer). An immediate-mode GPU (NVIDIA, AMD) without "
    "a depth buffer shades every layer. `blended`: blend operation max over a zero clear, so the "
    "result is still exactly the shader's value but every layer must be shaded on either kind of GPU: "
    "its GFLOP/s is real ALU work. FLOPs are counted only for shaded pixels: counted by the GPU where "
    "it can count fragment-shader invocations, every layer in blended mode, and one layer (a lower "
    "bound) in opaque mode without a counter. Store action `discard` (Metal's DontCare) writes nothing "
    "to memory: on a tile-based GPU the tile never leaves tile memory."
)


def fill_ceilings(study: GraphicsStudy) -> Dict[str, Tuple[float, Measurement]]:
    """The fill-rate roofline's ceilings from the valid ``fillrate`` passes: ``"fill rate"``, the
    highest shaded GPixel/s at F = 0 (rasteriser and ROP), and ``"fragment ALU"``, the highest
    GFLOP/s of a blended pass (every layer shaded); each with the pass it came from."""
    out: Dict[str, Tuple[float, Measurement]] = {}
    for m in study.suite("fillrate"):
        if not m.valid:
            continue
        if m.params.get("F") == 0 and ("fill rate" not in out or shaded_rate(m) > out["fill rate"][0]):
            out["fill rate"] = (shaded_rate(m), m)
        if (
            m.params.get("mode") == "blended"
            and m.flops
            and ("fragment ALU" not in out or m.gflops > out["fragment ALU"][0])
        ):
            out["fragment ALU"] = (m.gflops, m)
    return out


def tilemem_ratios(study: GraphicsStudy) -> Dict[Tuple[str, int, str], float]:
    """Each valid ``tilemem`` pass's shaded GPixel/s over R8's at the same F and store action
    ({(format, F, store): ratio}); the article compares R8 and RGBA8 at F = 128 (11.7x)."""
    base = {
        (m.params["F"], m.params["store"]): shaded_rate(m)
        for m in study.suite("tilemem")
        if m.valid and m.dtype == "r8unorm"
    }
    out: Dict[Tuple[str, int, str], float] = {}
    for m in study.suite("tilemem"):
        ref = base.get((m.params["F"], m.params["store"]))
        if m.valid and ref:
            out[(m.dtype, int(m.params["F"]), str(m.params["store"]))] = shaded_rate(m) / ref
    return out


def _valid(m: Measurement) -> str:
    return "yes" if m.valid else "**NO**"


def clock_cell(m: Measurement) -> str:
    """The pass's clock in MHz for a table, ``"**1410** below"`` when it ran below the steady clock,
    a dash when none was sampled."""
    c = pass_clock(m.params)
    if c is None:
        return DASH
    return f"**{c:.0f}** below" if m.params.get(CLOCK_PARAM) == BELOW else f"{c:.0f}"


def steady_note(study: GraphicsStudy) -> str:
    """What the steady clock is, its value, and which passes ran below it (docs/design/graphics.md, "The
    graphics study", "Steady clock")."""
    steady = study.params.get("steady_clock_mhz")
    clocked = [m for m in study.measurements if pass_clock(m.params) is not None]
    if not isinstance(steady, (int, float)) or not clocked:
        return "No clock was sampled during the passes, so none is marked steady or below it."
    tol = _tolerance(study)
    below = below_steady(study.measurements)
    text = (
        f"Steady clock: {steady:.0f} MHz, the median of the {len(clocked)} passes' clocks (each the mean "
        f"of the sampler's readings over that pass's timed samples); a pass more than {tol:.0%} under it "
        f"(below {steady * (1 - tol):.0f} MHz) is marked below steady (**bold** in the Clock columns). "
    )
    if below:
        text += (
            f"{len(below)} of {len(clocked)} passes ran below steady: "
            + "; ".join(
                f"{m.suite} {_short(m)} at {pass_clock(m.params):.0f} MHz"
                + (f" ({m.params['throttle']})" if m.params.get("throttle") not in (None, "none") else "")
                for m in below
            )
            + "."
        )
    else:
        text += "Every pass ran at the steady clock."
    return text


def _tolerance(study: GraphicsStudy) -> float:
    """The fraction under the steady clock the study allowed (:data:`~.clocks.CLOCK_TOLERANCE` where unrecorded)."""
    return float(study.params.get("clock_tolerance", CLOCK_TOLERANCE))


def _short(m: Measurement) -> str:
    fmt = "" if m.suite == "texture" else f"{m.dtype} "
    return fmt + describe_case(m.params)


def summary_lines(study: GraphicsStudy) -> List[str]:
    """Lines for the command line after a study: time per suite against its budget (a suite cut short
    says so), then the phases outside the suites and the wall total where recorded, the GPU's share
    of it where recorded (:func:`gpu_note`) and the steady clock with the passes below it."""
    lines: List[str] = []
    if study.suite_times:
        lines.append(
            "time per suite: "
            + ", ".join(
                f"{t.suite} {t.seconds:.1f} s of {t.budget_s:g}" if t.budget_s else f"{t.suite} {t.seconds:.1f} s"
                for t in study.suite_times
            )
            + f"; total {sum(t.seconds for t in study.suite_times):.1f} s"
            + "".join(f"; {p.label()} {p.seconds:.1f} s" for p in study.phase_times)
            + (f"; wall {wall_seconds(study.suite_times, study.phase_times):.1f} s" if study.phase_times else "")
        )
        note = gpu_note(study)
        if note:
            lines.append(note)
        lines += [
            f"suite {t.suite} was cut short by its {t.budget_s:g} s budget after {t.measured} "
            f"pass{'' if t.measured == 1 else 'es'}: the rest were not measured (--budget {t.suite}=SECONDS)"
            for t in study.suite_times
            if t.cut
        ]
    steady = study.params.get("steady_clock_mhz")
    if isinstance(steady, (int, float)):
        below = below_steady(study.measurements)
        clocked = sum(1 for m in study.measurements if pass_clock(m.params) is not None)
        lines.append(
            f"steady clock {steady:.0f} MHz (median of {clocked} pass{'' if clocked == 1 else 'es'}); "
            f"{len(below)} below it by more than {_tolerance(study):.0%}"
        )
    return lines


def gpu_note(study: GraphicsStudy) -> str:
    """Where the suites' seconds went on the GPU (``params["gpu_seconds"]``: timed samples, lead passes,
    probes) and the rest, the host's (building passes, reading targets back, waiting for checks); ""
    for a study that did not record it."""
    gpu = study.params.get("gpu_seconds")
    if not isinstance(gpu, dict) or not study.suite_times:
        return ""
    total = sum(t.seconds for t in study.suite_times)
    parts = {k: float(v) for k, v in gpu.items() if isinstance(v, (int, float))}
    rest = max(total - sum(parts.values()), 0.0)
    return (
        "of which on the GPU: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items())
        + f"; the rest ({rest:.1f} s) the stored passes, building passes, reading targets back and waiting "
        "for checks"
    )


def _fill_lines(study: GraphicsStudy) -> List[str]:
    ms = study.suite("fillrate")
    if not ms:
        return ["Not measured."]
    rows = [
        [
            str(m.params["F"]),
            str(m.params["mode"]),
            str(m.params["store"]),
            str(m.params["layers"]),
            sig_figs(drawn_rate(m)),
            sig_figs(shaded_rate(m)),
            str(m.params.get("shaded_by", DASH)),
            sig_figs(m.gflops),
            clock_cell(m),
            _valid(m),
        ]
        for m in ms
    ]
    lines = [MODE_NOTE, ""]
    lines += markdown_table(
        [
            "F",
            "Mode",
            "Store",
            "Layers",
            "GPixel/s drawn",
            "GPixel/s shaded",
            "Shaded by",
            "GFLOP/s",
            "Clock (MHz)",
            "Valid",
        ],
        rows,
        "rllrrrlrrl",
    )
    ceilings = fill_ceilings(study)
    if ceilings:
        lines += [""]
        for name, (value, m) in ceilings.items():
            unit = "GPixel/s" if name == "fill rate" else "GFLOP/s"
            lines.append(
                f"- **{name}**: {sig_figs(value)} {unit} ({m.params['mode']}, {m.params['store']}, "
                f"F={m.params['F']}, {layers_text([m])})"
            )
    notes = sorted({n for n in (shaded_note(m) for m in ms) if n})
    lines += [""] + [f"- shaded pixels: {n}" for n in notes]
    return lines


def _tilemem_lines(study: GraphicsStudy) -> List[str]:
    ms = study.suite("tilemem")
    if not ms:
        return ["Not measured."]
    ratios = tilemem_ratios(study)
    rows = []
    for m in ms:
        bpp = int(m.params["tile_bytes_per_pixel"])
        r = ratios.get((m.dtype, int(m.params["F"]), str(m.params["store"])))
        rows.append(
            [
                m.dtype,
                str(m.params["F"]),
                str(m.params["store"]),
                sig_figs(shaded_rate(m)),
                str(bpp),
                sig_figs(shaded_rate(m) * bpp),
                f"{r:.2f}x" if r else DASH,
                clock_cell(m),
                _valid(m),
            ]
        )
    return [
        "Opaque passes; tile/ROP traffic is bytes per pixel x pixels shaded, the target's format size "
        "(the R8-against-RGBA8 comparison of the M5 article: 11.7x at F = 128 on the M5).",
        "",
    ] + markdown_table(
        [
            "Format",
            "F",
            "Store",
            "GPixel/s shaded",
            "Tile bytes/pixel",
            "Tile GB/s",
            "vs r8unorm",
            "Clock (MHz)",
            "Valid",
        ],
        rows,
        "lrlrrrrrl",
    )


def _texture_lines(study: GraphicsStudy) -> List[str]:
    ms = study.suite("texture")
    if not ms:
        return ["Not measured."]
    rows = [
        [
            str(m.params["size"]),
            _bytes(int(m.params["working_set_bytes"])),
            str(m.params["pattern"]),
            str(m.params["filter"]),
            str(m.params["fetches"]),
            str(m.params.get("layers", 1)),
            sig_figs(texel_rate(m)),
            sig_figs(m.gbps),
            clock_cell(m),
            _valid(m),
        ]
        for m in ms
    ]
    lines = [
        "RGBA8 noise textures; GTexel/s counts fetches (a bilinear fetch reads a 2 x 2 footprint, "
        "16 bytes; a nearest one 4 bytes); the working set is the texture, S x S x 4 bytes. A pass draws "
        "`Layers` identical layers where the GPU counts fragment-shader invocations (the count gives the "
        "texels), else one.",
        "",
    ]
    lines += markdown_table(
        ["Size", "Working set", "Pattern", "Filter", "Fetches", "Layers", "GTexel/s", "GB/s", "Clock (MHz)", "Valid"],
        rows,
        "rrllrrrrrl",
    )
    found = cliffs(study.measurements)
    lines += ["", "### Cliffs", ""]
    if found:
        lines += markdown_table(
            ["Pattern", "Filter", "Fetches", "From size", "Working set", "GTexel/s before", "GTexel/s after"],
            [
                [
                    c.pattern,
                    c.filter,
                    str(c.fetches),
                    str(c.size),
                    _bytes(c.working_set_bytes),
                    sig_figs(c.before),
                    sig_figs(c.after),
                ]
                for c in found
            ],
            "llrrrrr",
        )
    else:
        lines += ["None: no texture line fell by more than a quarter from one size to the next."]
    return lines


def _bytes(n: int) -> str:
    from ..sizes import format_size

    return format_size(n)


def _markdown(study: GraphicsStudy) -> str:
    lines = title_lines("Graphics", study) + provenance_lines(study)
    lines += ["", "## Settings", "", key_value_pairs(study.params)]
    lines += ["", "## Fill-rate roofline", ""] + _fill_lines(study)
    lines += ["", "## Tile memory", ""] + _tilemem_lines(study)
    lines += ["", "## Texture cache", ""] + _texture_lines(study)
    note, table = telemetry_note(study.device), efficiency_table(study.measurements)
    if note is not None or table is not None:  # docs/design/power.md, "Clocks and power"
        lines += ["", "## Clocks and power", ""] + ([note] if note else [])
        if "clock_tolerance" in study.params:  # studies that mark the steady clock
            lines += ["", steady_note(study)]
        lines += (([""] if note else []) + table_lines(table)) if table is not None else []
    if study.suite_times:  # docs/design/budgets.md, "Time budgets"
        cut = [t.suite for t in study.suite_times if t.cut]
        lines += ["", "## Time per suite", ""] + markdown_table(
            list(TIME_HEADER), [list(r) for r in time_rows(study.suite_times, study.phase_times)], TIME_ALIGN
        )
        if cut:
            lines += ["", f"Cut short by its time budget: {', '.join(cut)} (the remaining passes were not measured)."]
        for note in time_notes((), study.phase_times):  # what the phases hold (the cut suites: above)
            lines += ["", note]
        note = gpu_note(study)
        lines += ["", note[0].upper() + note[1:] + "."] if note else []
    lines += [""] + skipped_lines(["Pass", "Reason"], [[s.label, s.reason] for s in study.skipped])
    warnings = header_warnings(study, "study")
    warnings += [
        f"{m.label} ({format_params(m.params)}) failed validation: {m.validation}"
        for m in study.measurements
        if not m.valid and not any(m.validation in w for w in warnings)
    ]
    return end_report(lines, warnings)


def _csv(study: GraphicsStudy) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "suite",
            "format",
            "params",
            "median_s",
            "gpixels_drawn",
            "gpixels_shaded",
            "gflops",
            "gtexels",
            "gbps",
            "cv",
            "valid",
        ]
    )
    for m in study.measurements:
        w.writerow(
            [
                m.suite,
                m.dtype,
                json.dumps(dict(m.params), separators=(",", ":")),
                repr(m.median_s),
                repr(drawn_rate(m)),
                repr(shaded_rate(m)),
                repr(m.gflops),
                repr(texel_rate(m)),
                repr(m.gbps),
                repr(m.cv),
                "true" if m.valid else "false",
            ]
        )
    return buf.getvalue()


def format_graphics(study: GraphicsStudy, fmt: str = "md") -> str:
    """The study as text: ``"md"`` (module docstring), ``"csv"`` (one row per pass: rates at the
    median, seconds at full precision) or ``"json"`` (:meth:`GraphicsStudy.to_json`).

    Raises:
        OptionError: an unknown format (the message lists them).
    """
    return format_report(study, fmt, FORMATS, _markdown, _csv, option="format")
