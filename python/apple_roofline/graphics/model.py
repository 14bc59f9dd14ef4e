"""The results of a graphics study: render-pass measurements and their JSON form (kind ``"graphics"``).

Each render pass is a :class:`~apple_roofline.study.records.Measurement` (suite ``fillrate``,
``tilemem`` or ``texture``; kernel ``fill`` or ``texture``; dtype the target format) whose
``params`` say what was drawn and what it costs:

* ``width``, ``height``, ``layers`` (overdraw), ``F``, ``mode`` (``opaque`` / ``blended``), ``store``
  (``store`` / ``discard``), ``size``, ``fetches``, ``pattern``, ``filter``, ``timer``;
* ``pixels_drawn`` = width × height × layers;
* ``pixels_shaded`` and ``shaded_by``: fragment-shader invocations counted by the GPU
  (``"counter"``), all drawn pixels (``"blended"``: blending makes every layer shaded), or the lower
  bound of one layer (``"one layer at least"``: opaque, no counter — a tile-based deferred renderer
  may shade only the last of identical opaque layers, an immediate-mode one shades all);
* ``tile_bytes_per_pixel``: render-target (tile memory / ROP) bytes per shaded pixel: the format's
  size, twice when blending reads the destination;
* ``texels``: fetches × pixels shaded (texture suite: ``layers`` identical layers, counted by the
  GPU, or one layer where it cannot count);
* ``batch`` (passes per timed sample), ``lead_s`` (seconds of untimed passes before the samples in
  the same submission), ``retried`` (timed again after a full spin-up, :mod:`.pacing`);
* the sampler's clocks and power over the timed samples, and ``clock``: ``"steady"`` or
  ``"below steady"`` against the study's steady clock (:func:`~.clocks.steady_clock`; ``params["steady_clock_mhz"]``).

FLOPs are counted only for shaded pixels (32·F each, per lane); bytes are tile/ROP traffic
(fill suites) or the texel bytes fetched (texture: 4 per nearest fetch, 16 per bilinear fetch:
its 2 x 2 footprint). Rates: GPixel/s drawn and shaded, GFLOP/s, GTexel/s, effective GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

from ..study.document import Document
from ..study.reader import Reader
from ..study.records import Measurement, Skipped
from ..study.timing import PhaseTime, SuiteTime, read_phase_times, read_suite_times

__all__ = [
    "SCHEMA_VERSION",
    "GraphicsStudy",
    "drawn_rate",
    "shaded_rate",
    "texel_rate",
    "cliffs",
    "Cliff",
    "shaded_note",
    "describe_case",
    "layers_text",
]

SCHEMA_VERSION = 1


def drawn_rate(m: Measurement) -> float:
    """Pixels drawn per second (all layers), in GPixel/s, at the median time."""
    return float(m.params.get("pixels_drawn", 0)) / m.median_s / 1e9


def shaded_rate(m: Measurement) -> float:
    """Pixels shaded per second, in GPixel/s, at the median time (see ``shaded_by``)."""
    return float(m.params.get("pixels_shaded", 0)) / m.median_s / 1e9


def layers_text(measurements: Sequence[Measurement], requested: Optional[int] = None) -> str:
    """The layers the fill passes of ``measurements`` drew, for a title: ``"128 layers"`` where each
    drew the ``requested`` overdraw; ``"1 layer a pass (128 requested)"`` or ``"1 to 64 layers a pass
    (128 requested)"`` where a pass's layers were reduced (a pass longer than ``max_pass_s``,
    :mod:`.passes`); ``""`` where none records its layers."""
    ran = sorted({int(m.params["layers"]) for m in measurements if "layers" in m.params})
    if not ran:
        return ""
    lo, hi = ran[0], ran[-1]
    counted = f"{lo} layer{'' if lo == 1 else 's'}" if lo == hi else f"{lo} to {hi} layers"
    if requested is None or ran == [requested]:
        return counted
    return f"{counted} a pass ({requested} requested)"


def texel_rate(m: Measurement) -> float:
    """Texture fetches per second, in GTexel/s, at the median time."""
    return float(m.params.get("texels", 0)) / m.median_s / 1e9


@dataclass(frozen=True)
class Cliff:
    """Where a texture line's rate falls: between two sizes the rate dropped by more than a quarter.

    Attributes:
        pattern, filter, fetches: the line.
        size: the first texture size after the drop (texels on a side).
        working_set_bytes: that size's working set, S² × 4 bytes.
        before, after: GTexel/s at the size before and at ``size``.
    """

    pattern: str
    filter: str
    fetches: int
    size: int
    working_set_bytes: int
    before: float
    after: float


def cliffs(measurements: Tuple[Measurement, ...], drop: float = 0.25) -> List[Cliff]:
    """The cliffs of the valid texture measurements: for each (pattern, filter, fetches) line, in
    size order, every size whose GTexel/s is more than ``drop`` below the size before it."""
    lines: Dict[Tuple[str, str, int], List[Measurement]] = {}
    for m in measurements:
        if m.suite == "texture" and m.valid:
            key = (str(m.params["pattern"]), str(m.params["filter"]), int(m.params["fetches"]))
            lines.setdefault(key, []).append(m)
    out: List[Cliff] = []
    for (pattern, filter_, fetches), ms in lines.items():
        ms.sort(key=lambda m: int(m.params["size"]))
        for a, b in zip(ms, ms[1:]):
            ra, rb = texel_rate(a), texel_rate(b)
            if rb < (1.0 - drop) * ra:
                size = int(b.params["size"])
                out.append(Cliff(pattern, filter_, fetches, size, size * size * 4, ra, rb))
    return out


@dataclass(frozen=True)
class GraphicsStudy(Document):
    """Everything one graphics study measured (the header's fields, then these).

    Attributes:
        params: the study's settings (``suites``, ``width``, ``height``, ``overdraw``, ``quick``,
            ``api``: ``"wgpu"`` or ``"metal"``), JSON-ready.
        measurements: every render pass measured, valid or not (module docstring).
        skipped: passes the device cannot run (a format, a texture size beyond its limit), with the
            reason.
        suite_times: each suite's seconds against its time budget, in order (empty in files
            written before budgets; written only when recorded).
        phase_times: the time outside the suites (start-up, between suites, end:
            :class:`~apple_roofline.study.timing.PhaseTime`), in order (empty in files written
            before it was recorded).
    """

    KIND: ClassVar[str] = "graphics"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    DESCRIPTION: ClassVar[str] = "graphics study"

    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    measurements: Tuple[Measurement, ...] = ()
    skipped: Tuple[Skipped, ...] = ()
    suite_times: Tuple[SuiteTime, ...] = ()
    phase_times: Tuple[PhaseTime, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "measurements", tuple(self.measurements))
        object.__setattr__(self, "skipped", tuple(self.skipped))
        object.__setattr__(self, "suite_times", tuple(self.suite_times))
        object.__setattr__(self, "phase_times", tuple(self.phase_times))

    def budget_cuts(self) -> Tuple[SuiteTime, ...]:
        """The suites of :attr:`suite_times` cut short by their budget: they make the study partial
        (:attr:`~apple_roofline.study.document.Document.status`)."""
        return tuple(t for t in self.suite_times if t.cut)

    @property
    def valid(self) -> bool:
        """Whether every measurement passed validation."""
        return all(m.valid for m in self.measurements)

    def suite(self, name: str) -> Tuple[Measurement, ...]:
        """The measurements of suite ``name``, in order."""
        return tuple(m for m in self.measurements if m.suite == name)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header, ``params``, ``measurements``, ``skipped`` and, when recorded,
        ``suite_times`` and ``phase_times``."""
        return {
            **self.header_dict(),
            "params": dict(self.params),
            "measurements": [m.to_dict() for m in self.measurements],
            "skipped": [s.to_dict() for s in self.skipped],
            **({"suite_times": [t.to_dict() for t in self.suite_times]} if self.suite_times else {}),
            **({"phase_times": [t.to_dict() for t in self.phase_times]} if self.phase_times else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "GraphicsStudy":
        """Build from :meth:`to_dict` output. Raises :class:`~apple_roofline.study.files.ResultsError`."""
        r = Reader(source)
        header = cls.read_header(d, r)
        return cls(
            **header,
            params=r.params(d),
            measurements=tuple(
                Measurement.from_dict(m, source=source, where=f"measurements[{i}]")
                for i, m in enumerate(r.array(d, "measurements", ""))
            ),
            skipped=tuple(
                Skipped.from_dict(s, source=source, where=f"skipped[{i}]")
                for i, s in enumerate(r.array(d, "skipped", "", required=False))
            ),
            suite_times=read_suite_times(d, source),
            phase_times=read_phase_times(d, source),
        )


def shaded_note(m: Measurement) -> Optional[str]:
    """A sentence on how ``pixels_shaded`` was found, for reports."""
    by = m.params.get("shaded_by")
    return {
        "counter": "fragment-shader invocations counted by the GPU (pipeline statistics)",
        "blended": "every drawn layer: blending reads the destination, so no layer can be skipped",
        "one layer at least": (
            "one layer per pixel, a lower bound: opaque identical layers, and no counter "
            "to say whether the GPU removed hidden ones"
        ),
    }.get(str(by))


def describe_case(params: Mapping[str, Any]) -> str:
    """A pass's case in one line from the parameters that tell it from the suite's others (those of F,
    mode, store, size, pattern, filter, fetches it has): ``"F=64 mode=opaque store=store"``."""
    keys = ("F", "mode", "store", "size", "pattern", "filter", "fetches")
    return " ".join(f"{k}={params[k]}" for k in keys if k in params)
