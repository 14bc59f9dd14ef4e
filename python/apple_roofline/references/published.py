"""Published figures as a reference: what an article or a public table states about a chip, each
figure with where in its source it stands (docs/design/extending.md, "References").

A published reference is one source (:class:`Source`: title, author, publisher, address, date)
and its figures (:class:`PublishedFigure`): the chip it is for (``"Apple M5"``, as the device
reports its name), the engine (``"GPU"``, ``"CPU (AMX)"``, ``"Neural Engine"`` …), the value in
its unit, the basis (the source's own benchmark, a specification, or an estimate) and the section
or table it comes from. A figure may name what it corresponds to in a run (``compare_to``): one of
the run's ceilings (measured by default, or theoretical) or a field of its device description
(``gpu_cores``). The figures are published, never measured by this tool: every table that shows
them says so.

The JSON layout (package data, ``references/data/<name>.json``)::

    {"name", "description",
     "source": {"title", "author", "publisher", "url", "date", "note"},   # null where not stated
     "figures": [{"chip", "engine", "figure", "value", "unit", "basis", "where",
                  "compare_to": {"ceiling", "source"} | {"device"}}]}      # compare_to optional
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Mapping, Optional, Tuple

from ..roofline.model.run import Run
from ..study.reader import Reader, join
from ..study.records import CEILING_SOURCES

__all__ = [
    "BASES",
    "ENGINE_BACKENDS",
    "Source",
    "PublishedFigure",
    "PublishedReference",
    "chip_names",
    "chip_key",
    "is_chip_of",
]

#: What a published figure rests on: the source's own ``benchmark``, a ``specification`` (a vendor
#: figure or a peak derived from clock and ALU count), or an ``estimate``.
BASES: Tuple[str, ...] = ("benchmark", "specification", "estimate")
#: The run backends whose runs measure an engine's figures; engines not listed have no runs here. A
#: GPU's figures are set beside its runs through Metal and through WebGPU (wgpu: Vulkan, Metal,
#: D3D12), the route of the Vulkan studies.
ENGINE_BACKENDS: Dict[str, Tuple[str, ...]] = {"GPU": ("metal", "wgpu"), "CPU (AMX)": ("cpu",)}


@dataclass(frozen=True)
class Source:
    """Where published figures come from: ``title``; ``author``, ``publisher``, ``url`` and
    ``date`` (ISO 8601), each None where the source does not state it; ``note`` on how it was
    read."""

    title: str
    author: Optional[str] = None
    publisher: Optional[str] = None
    url: Optional[str] = None
    date: Optional[str] = None
    note: str = ""

    def citation(self) -> str:
        """``"'Title', Author, Publisher, 2025-10-15, https://…"`` with what is stated, and the
        fields the source does not state named (``"(no author, publisher, date or address
        stated)"``)."""
        parts = [f"'{self.title}'"] + [p for p in (self.author, self.publisher, self.date, self.url) if p]
        missing = [
            w
            for w, v in (
                ("author", self.author),
                ("publisher", self.publisher),
                ("date", self.date),
                ("address", self.url),
            )
            if not v
        ]
        text = ", ".join(parts)
        if missing:
            listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " or " + missing[-1]
            text += f" (no {listed} stated)"
        return text


@dataclass(frozen=True)
class PublishedFigure:
    """One published figure.

    Attributes:
        chip: the chip it is for, as a device reports its name (``"Apple M5"``).
        engine: the engine that ran or is rated: ``"GPU"``, ``"CPU (AMX)"``, ``"Neural Engine"`` ….
        figure: what it is, in words (``"STREAM copy"``).
        value: the figure, finite, in ``unit``.
        unit: ``"GB/s"``, ``"GFLOP/s"``, ``"MHz"``, ``"cores"``, ``"GPixel/s"``, ``"W"`` ….
        basis: one of :data:`BASES`.
        where: the section, table and row of the source it stands in.
        ceiling: the run's ceiling it corresponds to (its name), or None.
        ceiling_source: ``"measured"`` or ``"theoretical"``: which of the run's ceilings of that name.
        device_field: the run's device-description key it corresponds to (``"gpu_cores"``), or None.
    """

    chip: str
    engine: str
    figure: str
    value: float
    unit: str
    basis: str
    where: str
    ceiling: Optional[str] = None
    ceiling_source: str = "measured"
    device_field: Optional[str] = None

    def run_value(self, run: Run) -> Optional[float]:
        """The run's figure this one corresponds to: the ceiling of that name, source and unit, or
        the device field (a number); None where the figure has no counterpart, the run is of
        another engine (:data:`ENGINE_BACKENDS`) or lacks it. The chip is the caller's to match."""
        if run.backend not in ENGINE_BACKENDS.get(self.engine, ()):
            return None
        if self.ceiling is not None:
            for c in run.ceilings:
                if c.name == self.ceiling and c.source == self.ceiling_source and c.unit == self.unit:
                    return c.value
            return None
        if self.device_field is not None:
            v = run.device.get(self.device_field)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        return None

    def counterpart(self) -> str:
        """What the figure is set beside in a run, in words (``"measured FP32 vector"``,
        ``"device gpu_cores"``), or ``""``."""
        if self.ceiling is not None:
            return f"{self.ceiling_source} {self.ceiling}"
        return f"device {self.device_field}" if self.device_field is not None else ""


def chip_key(name: str) -> str:
    """A chip's name as matched (:func:`is_chip_of`): case, spacing, trademark signs, a trailing
    "Graphics" and a trailing parenthesised driver suffix dropped. ``"AMD Radeon(TM) 780M Graphics"``
    and ``"AMD Radeon 780M (RADV PHOENIX)"`` both give ``"amd radeon 780m"``; ``"Apple M5 Pro"`` stays
    apart from ``"Apple M5"``."""
    text = re.sub(r"\((?:tm|r)\)|[®™]", " ", name, flags=re.IGNORECASE)
    text = re.sub(r"\s*\([^)]*\)\s*$", "", text)  # a driver's suffix in parentheses
    text = re.sub(r"\s+graphics\s*$", "", text.strip(), flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip().casefold()


def is_chip_of(chip: str, run: Run) -> bool:
    """Whether the published figure's ``chip`` is the run's (:func:`chip_names`, by :func:`chip_key`)."""
    return bool(chip_key(chip)) and chip_key(chip) in {chip_key(n) for n in chip_names(run)}


def chip_names(run: Run) -> Tuple[str, ...]:
    """The names a run's chip goes by: its device's ``name`` and, where recorded, its ``chip``."""
    names = [run.device_name]
    chip = run.device.get("chip")
    if isinstance(chip, str) and chip and chip not in names:
        names.append(chip)
    return tuple(names)


@dataclass(frozen=True)
class PublishedReference:
    """A published reference: ``name`` (what ``--reference`` takes), ``description``, its
    ``source`` and its ``figures`` in the source's order."""

    KIND: ClassVar[str] = "published"

    name: str
    description: str
    source: Source
    figures: Tuple[PublishedFigure, ...]

    @property
    def chips(self) -> Tuple[str, ...]:
        """The chips it has figures for, in order."""
        return tuple(dict.fromkeys(f.chip for f in self.figures))

    def figures_for(self, run: Run) -> Tuple[PublishedFigure, ...]:
        """The figures for the run's chip (:func:`is_chip_of`); empty where it has none."""
        return tuple(f for f in self.figures if is_chip_of(f.chip, run))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>") -> "PublishedReference":
        """Read the JSON layout (module docstring).

        Raises:
            ~apple_roofline.study.files.ResultsError: a key missing or of the wrong type, a value
                not finite, a basis not in :data:`BASES`, or a ``compare_to`` that names neither a
                ceiling nor a device field.
        """
        r = Reader(source)
        d = r.obj(d, "")
        s = r.obj(r.req(d, "source", ""), "source")
        src = Source(
            r.string(s, "title", "source"),
            r.opt_string(s, "author", "source"),
            r.opt_string(s, "publisher", "source"),
            r.opt_string(s, "url", "source"),
            r.opt_string(s, "date", "source"),
            r.string(s, "note", "source", default=""),
        )
        figures = []
        for i, f in enumerate(r.array(d, "figures", "")):
            where = f"figures[{i}]"
            f = r.obj(f, where)
            basis = r.string(f, "basis", where)
            if basis not in BASES:
                r.fail(f"{join(where, 'basis')} must be one of {', '.join(BASES)}, not {basis!r}")
            to = r.obj(f.get("compare_to", {}), join(where, "compare_to"))
            ceiling, device_field = r.opt_string(to, "ceiling", where), r.opt_string(to, "device", where)
            ceiling_source = r.string(to, "source", where, default="measured")
            if to and (ceiling is None) == (device_field is None):
                r.fail(f"{join(where, 'compare_to')} must name a ceiling or a device field (one of them)")
            if ceiling_source not in CEILING_SOURCES:
                r.fail(
                    f"{join(where, 'compare_to.source')} must be one of {', '.join(CEILING_SOURCES)}, "
                    f"not {ceiling_source!r}"
                )
            value, unit = r.number(f, "value", where), r.string(f, "unit", where)
            r.within_rate(value, join(where, "value"), unit)  # a GB/s or GFLOP/s figure within any device's
            figures.append(
                PublishedFigure(
                    r.string(f, "chip", where),
                    r.string(f, "engine", where),
                    r.string(f, "figure", where),
                    value,
                    unit,
                    basis,
                    r.string(f, "where", where),
                    ceiling,
                    ceiling_source,
                    device_field,
                )
            )
        return cls(r.string(d, "name", ""), r.string(d, "description", ""), src, tuple(figures))
