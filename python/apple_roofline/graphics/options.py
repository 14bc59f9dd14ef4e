"""The graphics study's options, checked before anything is measured: the device name, the render
target, lists of suites, patterns and filters, F values, texture sizes and fetch counts. Each bad
value raises :class:`~apple_roofline.errors.OptionError` naming the option and its valid range (the
CLI prints it as one line and exits 2)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..errors import OptionError, check_int, check_ints
from ..study.budget import Budgets
from ..timing.clocks import CLOCK_TOLERANCE
from ..timing.measure import check_reps
from .grid import GRIDS, Grid, build_grid, curve_samples, graphics_budgets
from .kernels import DEFAULT_OVERDRAW, FILTERS, HEIGHT, MAX_F, PATTERNS, SUITES, WIDTH

__all__ = [
    "MAX_OVERDRAW",
    "MAX_FETCHES",
    "GraphicsOptions",
    "parse_graphics_device",
    "parse_resolution",
    "parse_choices",
    "check_f_values",
    "check_sizes",
    "check_fetches",
]

#: The most layers of overdraw.
MAX_OVERDRAW = 4096
#: The most fetches per pixel.
MAX_FETCHES = 64
_DEVICE = re.compile(r"^(wgpu|metal)(?::([0-9]+))?$")


@dataclass(frozen=True)
class GraphicsOptions:
    """The graphics study's options, checked when built (the one place) and recorded once, as the
    study's ``params`` and its journal's options (:meth:`params`, :meth:`recorded`). The fields are
    what :func:`~.runner.run_graphics` takes (its docstring gives each and its range).

    Attributes:
        api, index, names, grid_name, plan, budgets_s, pass_limit: (derived) the device's API and
            adapter, the suites, the grid's name and its cases, seconds per suite, and the longest
            fill pass; ``quick`` is set with the quick grid.

    Raises:
        OptionError: a bad option (the message names the parameter and its range).
    """

    device: str = "wgpu:0"
    suites: Optional[Sequence[str]] = None
    overdraw: int = DEFAULT_OVERDRAW
    f_values: Optional[Sequence[int]] = None
    patterns: Optional[Sequence[str]] = None
    sizes: Optional[Sequence[int]] = None
    fetches: Optional[Sequence[int]] = None
    filters: Optional[Sequence[str]] = None
    width: int = WIDTH
    height: int = HEIGHT
    quick: bool = False
    grid: Optional[str] = None
    reps: int = 10
    max_pass_s: Optional[float] = None
    budget: Budgets = None
    telemetry: bool = True
    command: Sequence[str] = ()
    api: str = field(init=False, repr=False, compare=False)
    index: int = field(init=False, repr=False, compare=False)
    names: Tuple[str, ...] = field(init=False, repr=False, compare=False)
    grid_name: str = field(init=False, repr=False, compare=False)
    plan: Grid = field(init=False, repr=False, compare=False)
    budgets_s: Mapping[str, float] = field(init=False, repr=False, compare=False)
    pass_limit: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # frozen: normalised once, here

        api, index = parse_graphics_device(self.device)
        put("api", api)
        put("index", index)
        put("names", tuple(parse_choices(self.suites or SUITES, "suites", SUITES, "graphics suite")))
        put("overdraw", check_int(self.overdraw, "overdraw", 1, MAX_OVERDRAW))
        grid_name = (
            parse_choices(self.grid, "grid", GRIDS, "graphics grid")[0]
            if self.grid
            else ("quick" if self.quick else "default")
        )
        put("grid_name", grid_name)
        put("quick", self.quick or grid_name == "quick")
        put("plan", self._plan())
        for name, v in (("width", self.width), ("height", self.height)):
            check_int(v, name, 16, 16384)
        put("reps", check_reps(self.reps))
        put("budgets_s", graphics_budgets(self.names, grid_name, self.budget))
        put("pass_limit", self.max_pass_s if self.max_pass_s is not None else (0.01 if self.quick else 0.02))
        put("command", tuple(self.command))

    def _plan(self) -> Grid:
        return build_grid(
            self.grid_name,
            f_values=check_f_values(list(self.f_values)) if self.f_values is not None else None,
            patterns=(
                parse_choices(self.patterns, "patterns", PATTERNS, "texture pattern")
                if self.patterns is not None
                else None
            ),
            sizes=check_sizes(list(self.sizes)) if self.sizes is not None else None,
            fetches=check_fetches(list(self.fetches)) if self.fetches is not None else None,
            filters=(
                parse_choices(self.filters, "filters", FILTERS, "texture filter") if self.filters is not None else None
            ),
        )

    def params(self, spin_up_s: float, min_sample_s: float) -> Dict[str, Any]:
        """The study's ``params`` (before the steady clock and the pacer's counts), with the pacer's
        ``spin_up_s`` and ``min_sample_s``."""
        plan = self.plan
        return {
            "suites": list(self.names),
            "grid": self.grid_name,
            "width": self.width,
            "height": self.height,
            "overdraw": self.overdraw,
            "quick": self.quick,
            "api": self.api,
            "f": sorted({c[1] for c in plan.fillrate}),
            "patterns": sorted({c[1] for c in plan.texture}),
            "sizes": sorted({c[0] for c in plan.texture}),
            "fetches": sorted({c[3] for c in plan.texture}),
            "filters": sorted({c[2] for c in plan.texture}),
            "reps": self.reps,
            "curve_reps": curve_samples(self.grid_name, self.reps),
            "spin_up_s": spin_up_s,
            "min_sample_s": min_sample_s,
            "budgets_s": dict(self.budgets_s),
            "clock_tolerance": CLOCK_TOLERANCE,
        }

    def recorded(self, spin_up_s: float, min_sample_s: float) -> Dict[str, Any]:
        """The options the journal's header records: :meth:`params`, ``telemetry`` and ``max_pass_s``."""
        return {**self.params(spin_up_s, min_sample_s), "telemetry": self.telemetry, "max_pass_s": self.pass_limit}


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


def parse_choices(
    text: Union[str, Sequence[str]], option: str, valid: Sequence[str], noun: str = "choice"
) -> Tuple[str, ...]:
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
    return check_ints(values, "f", 0, MAX_F)


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
    return check_ints(values, "fetches", 1, MAX_FETCHES)
