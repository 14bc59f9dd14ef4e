"""Which passes a graphics study measures, how many samples each takes, and the seconds each suite
may take (docs/design/graphics.md, "The graphics study": the grid, time budgets).

Three grids, each a list of cases per suite:

* ``default`` — the study's questions, answered in about 20 s on an H100 or H200 through wgpu (whose
  graphics run on two TPCs, 4 of its 132 SMs):

  - fill rate: blended at every power of two F = 0, 1, 2 … 512 (F = 0 is the rasteriser/ROP
    ceiling, the largest F the fragment ALU ceiling and bench_graphics.py's comparison with the compute
    kernel; the knee where a pass turns from fill-bound to ALU-bound lies between two neighbours, so
    the ridge is located within a factor of two); opaque at every other power of two,
    :data:`OPAQUE_F` (0, 2, 8 … 512: no opaque pass but F = 0 can set a ceiling, and its line, equal
    to the blended one on an immediate-mode GPU, keeps its knee within a factor of four); store
    action ``store``, and at F = 0 also ``discard`` (what writing the target to memory costs: on a
    tile-based GPU a discarded tile never leaves tile memory; once ALU-bound the store action changes
    nothing). At each F the blended pass comes first: a budget cut takes the opaque one first.
  - tile memory: every format at F = 0 stored and discarded (bytes per pixel against the ROP and
    memory path) and at F = 128 stored (the M5 article's R8-against-RGBA8 comparison).
  - texture cache: every size from 64² to 8192² (16 KiB to 256 MiB: below a first-level texture cache,
    across second-level caches of 4 to 50 MiB, and well past any last-level cache: each size 4x the
    working set of the one before), both patterns (random defeats any prefetcher, so it shows the
    cliffs; coherent streams), both filters, at 16 fetches per pixel (texture-bound: the 16-byte
    target write per pixel is amortised); and at 1 fetch (the floor set by that write: on an H100 a
    one-fetch pass runs at 1.8 GTexel/s at every size, so a line that stays flat at 1 fetch and falls
    at 16 shows the cache, not the target) at every other size, :data:`FLOOR_SIZES` (64², 256², 1024²,
    4096²: either side of each cliff the 16-fetch lines showed on an H100, past 256² and past 1024²).

* ``quick`` — a look in under half a minute: F = 0, 64, 512; every format at F = 0 and 128, stored;
  texture sizes 64², 256², 1024², 4096² at 16 fetches.
* ``full`` — every point of before: F = 0, 1, 2 … 512 in both modes and both store actions, tile
  memory at F = 0, 16, 128, 512 both stored and discarded, texture sizes 64² … 8192² × 1, 2, 4, 8, 16
  fetches.

Samples: in the ``default`` and ``quick`` grids a pass that could set a ceiling (:meth:`Grid.ceiling`:
every pass at F = 0, and blended passes at the grid's two largest F) takes ``reps`` samples, every
other pass, which only draws a line, half as many (:meth:`Grid.samples`); ``full`` takes ``reps``
everywhere.

Options replace one axis of any grid (``f_values``, ``patterns``, ``sizes``, ``fetches``, ``filters``), so every
point stays reachable: with ``f_values`` both modes are measured at every F given, with ``sizes`` or
``fetches`` every fetch count at every size. Budgets: :data:`SUITE_BUDGET_S` (``quick``:
:data:`QUICK_BUDGET_S`; ``full``: none) are seconds of wall time per suite, checked before each pass
(:mod:`apple_roofline.study.timing`); a suite whose budget runs out stops there and the report says
so. They are set so that a default study stays within 90 s (``quick``: 30 s) on any GPU; on an H100
none is reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ..study.budget import Budgets, parse_budgets
from .kernels import FETCHES, FILL_F, FILL_FORMAT, FILTERS, FORMATS, MODES, PATTERNS, STORES, TEXTURE_SIZES, TILEMEM_F

__all__ = [
    "GRIDS",
    "DEFAULT_F",
    "OPAQUE_F",
    "QUICK_F",
    "DISCARD_F",
    "DEFAULT_FETCHES",
    "FLOOR_SIZES",
    "QUICK_SIZES",
    "SUITE_BUDGET_S",
    "QUICK_BUDGET_S",
    "FillCase",
    "TextureCase",
    "Grid",
    "build_grid",
    "curve_samples",
    "graphics_budgets",
]

#: The grids by name.
GRIDS: Tuple[str, ...] = ("default", "quick", "full")
#: F of the default fill-rate sweep (blended at every one).
DEFAULT_F: Tuple[int, ...] = FILL_F
#: F at which the default grid also measures opaque passes: every other power of two, and F = 0.
OPAQUE_F: Tuple[int, ...] = (0, 2, 8, 32, 128, 512)
#: F of the quick fill-rate sweep.
QUICK_F: Tuple[int, ...] = (0, 64, 512)
#: F at which the default and quick grids also measure store action ``discard``.
DISCARD_F: Tuple[int, ...] = (0,)
#: Fetches per pixel of the default texture grid.
DEFAULT_FETCHES: Tuple[int, ...] = (1, 16)
#: Texture sizes at which the default grid measures its smallest fetch count (the target-write floor).
FLOOR_SIZES: Tuple[int, ...] = (64, 256, 1024, 4096)
#: Texture sizes of the quick grid.
QUICK_SIZES: Tuple[int, ...] = (64, 256, 1024, 4096)
#: Seconds per suite of a default study.
SUITE_BUDGET_S: Mapping[str, float] = {"fillrate": 20.0, "tilemem": 15.0, "texture": 45.0}
#: Seconds per suite with ``quick``.
QUICK_BUDGET_S: Mapping[str, float] = {"fillrate": 6.0, "tilemem": 5.0, "texture": 12.0}

#: (format, F, mode, store) of one fill pass.
FillCase = Tuple[str, int, str, str]
#: (size, pattern, filter, fetches) of one texture pass.
TextureCase = Tuple[int, str, str, int]


def curve_samples(grid: str, reps: int) -> int:
    """Samples of a pass that only draws a line in grid ``grid``: half of ``reps`` (rounded up) in the
    ``default`` and ``quick`` grids, ``reps`` in ``full``."""
    return reps if grid == "full" else max(1, -(-reps // 2))


@dataclass(frozen=True)
class Grid:
    """The passes of one study, per suite, in measuring order.

    Attributes:
        name: ``"default"``, ``"quick"`` or ``"full"``.
        fillrate, tilemem: (format, F, mode, store) cases.
        texture: (size, pattern, filter, fetches) cases, before the device's texture limit is applied.
    """

    name: str
    fillrate: Tuple[FillCase, ...]
    tilemem: Tuple[FillCase, ...]
    texture: Tuple[TextureCase, ...]

    def cases(self, suite: str) -> int:
        """How many passes suite ``suite`` has (before the device's limits)."""
        return len(getattr(self, suite))

    def ceiling(self, suite: str, case: Tuple[Any, ...]) -> bool:
        """Whether the pass ``case`` of suite ``suite`` could set a ceiling: a fill or tile-memory
        pass at F = 0 (the rasteriser/ROP rate, a format's bytes per pixel), or a blended fill pass at
        one of the two largest F of the fill-rate cases (the fragment ALU rate: on an H100 the largest
        two agree within 0.5 %). Texture passes draw lines and cliffs: none."""
        if suite == "texture":
            return False
        F, mode = int(case[1]), str(case[2])
        top = sorted({c[1] for c in self.fillrate})[-2:]
        return F == 0 or (suite == "fillrate" and mode == "blended" and F in top)

    def samples(self, suite: str, case: Tuple[Any, ...], reps: int) -> int:
        """Samples of pass ``case`` of suite ``suite``: ``reps`` for a pass that could set a ceiling
        (:meth:`ceiling`), else :func:`curve_samples`."""
        return reps if self.ceiling(suite, case) else curve_samples(self.name, reps)


#: Blended before opaque at each F: the blended pass could set the fragment ALU ceiling, so a suite cut
#: by its budget loses the opaque one first.
_MODE_ORDER: Tuple[str, ...] = tuple(sorted(MODES, key=lambda m: m != "blended"))


def _stores(grid: str, F: int) -> Tuple[str, ...]:
    return STORES if grid == "full" or F in DISCARD_F else ("store",)


def build_grid(
    name: str = "default",
    *,
    f_values: Optional[Sequence[int]] = None,
    patterns: Optional[Sequence[str]] = None,
    sizes: Optional[Sequence[int]] = None,
    fetches: Optional[Sequence[int]] = None,
    filters: Optional[Sequence[str]] = None,
) -> Grid:
    """The grid ``name`` (:data:`GRIDS`), with any axis given replaced (values already checked).

    Raises:
        ValueError: an unknown grid name.
    """
    if name not in GRIDS:
        raise ValueError(f"grid {name!r} is not a graphics grid (valid: {', '.join(GRIDS)})")
    fs = tuple(f_values) if f_values is not None else {"default": DEFAULT_F, "quick": QUICK_F, "full": FILL_F}[name]
    opaque = OPAQUE_F if name == "default" and f_values is None else fs
    fill = tuple(
        (FILL_FORMAT, F, mode, store)
        for F in fs
        for mode in _MODE_ORDER
        if mode != "opaque" or F in opaque
        for store in _stores(name, F)
    )
    if name == "full":
        tile = tuple((fmt, F, "opaque", store) for fmt in FORMATS for F in TILEMEM_F for store in STORES)
    else:
        points = ((0, "store"), (0, "discard"), (128, "store")) if name == "default" else ((0, "store"), (128, "store"))
        tile = tuple((fmt, F, "opaque", store) for fmt in FORMATS for F, store in points)
    pats = tuple(patterns) if patterns is not None else PATTERNS
    sz = tuple(sizes) if sizes is not None else (QUICK_SIZES if name == "quick" else TEXTURE_SIZES)
    fe = tuple(fetches) if fetches is not None else {"default": DEFAULT_FETCHES, "quick": (16,), "full": FETCHES}[name]
    fl = tuple(filters) if filters is not None else FILTERS
    # the default grid's floor line (its fewest fetches) at FLOOR_SIZES only, unless sizes or fetches are given
    thin = name == "default" and sizes is None and fetches is None
    texture = tuple(
        (s, p, f, n) for s in sz for p in pats for f in fl for n in fe if not thin or n != min(fe) or s in FLOOR_SIZES
    )
    return Grid(name, fill, tile, texture)


def graphics_budgets(suites: Sequence[str], grid: str = "default", budgets: Budgets = None) -> Dict[str, float]:
    """Seconds of budget per suite (0: none): :data:`SUITE_BUDGET_S`, :data:`QUICK_BUDGET_S` for
    ``quick``, none for ``full``, with ``budgets`` applied (:func:`~apple_roofline.study.budget.parse_budgets`).

    Raises:
        OptionError: (option ``budget``) malformed, an unknown suite, or out of range.
    """
    defaults = {"default": SUITE_BUDGET_S, "quick": QUICK_BUDGET_S}.get(grid, {})
    return parse_budgets(suites, defaults, budgets)
