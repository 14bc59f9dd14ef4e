"""The one registry of the roofline study's suites (docs/design/extending.md, "Adding a suite").

A suite is a folder: a subpackage of :mod:`apple_roofline.suites` whose ``spec`` module defines
``SPEC``, a :class:`SuiteSpec` naming everything the rest of the tool needs of it: its measuring
class, its place in a run, its budget, the options its sweep forms take, the ceilings and warnings
its rules make of a run's measurements, and its report sections with their figures. The runner, the model,
the Markdown and HTML reports, the figures writer and the command line's help ask this registry and
name no suite. Discovery walks the package's ``__path__`` (:func:`pkgutil.iter_modules`), so a folder
dropped into ``suites/`` is found, and a test can put another folder on that path (then call
:func:`refresh`). The suites are imported on the first question, never when this module is, so
importing the model imports no suite.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type

if TYPE_CHECKING:
    from ..study.records import Ceiling, Measurement
    from .base import Suite, SuiteContext
    from .work import CaseWork

#: What a section's tables and a figure are built from: a run (:class:`~apple_roofline.roofline.model.run.Run`).
#: The registry is imported by the model, which the run and the tables import, so it names their
#: types loosely here (a report table is a :class:`~apple_roofline.study.table.Table`, a figure a
#: matplotlib Figure) and imports no view.
RunOf = Any

__all__ = [
    "SuiteSpec",
    "Section",
    "SuiteFigure",
    "specs",
    "spec",
    "suite_names",
    "default_suites",
    "budgets_s",
    "sections",
    "figures",
    "own_figures",
    "suite_ceilings",
    "suite_ceiling_names",
    "suite_warnings",
    "sizing_warnings",
    "roof_class",
    "PointMarker",
    "LimitRule",
    "limit_rule",
    "pipe_class",
    "drawn",
    "point_marker",
    "curves",
    "compare_class",
    "disturbed",
    "quick_options",
    "suite_options",
    "device_facts",
    "case_work",
    "refresh",
    "SPEC_MODULE",
    "optional_tables",
]

#: The module of a suite's folder that defines its ``SPEC``.
SPEC_MODULE = "spec"


def _none(*_args: object) -> Tuple[()]:
    return ()


def _no_options(_named: bool) -> Mapping[str, Any]:
    return {}


def _no_facts(_info: Mapping[str, Any]) -> Mapping[str, Any]:
    return {}


def _no_class(_m: "Measurement") -> Optional[str]:
    return None


def _no_sizing_warnings(_measurements: Sequence["Measurement"], _ctx: "SuiteContext") -> Tuple[()]:
    return ()


def _always(_m: "Measurement") -> bool:
    return True


def _no_disturbed(_measurements: Sequence["Measurement"]) -> Mapping[int, int]:
    return {}


def _no_level(_m: "Measurement") -> Optional[str]:
    return None


def _never(_m: "Measurement") -> bool:
    return False


def _no_pipe(_ceiling_class: str, _geforce: bool) -> Optional[str]:
    return None


@dataclass(frozen=True)
class LimitRule:
    """How a suite's measurements meet the physical limits where their ceiling class does not say
    (:mod:`apple_roofline.roofline.model.limits`; docs/design/limits.md).

    Attributes:
        level: the memory level a measurement's figure is labelled with, of those with a limit of
            their own (``"DRAM"``: the memory interface's peak; ``"L1"``: the on-chip data path), or None.
        best_figure: whether its figure is GB/s at the best sample (as the hierarchy's curve is
            drawn and its levels found) rather than at the median.
        shortest_sample: whether the timer's share of its samples is judged from the shortest sample
            rather than the median one.
        pipe_class: the theoretical ceiling class whose peak bounds a compute class of its kernels
            that no theoretical ceiling names (a matrix tile's: the GEMM peak of its inputs), given
            whether the part is a GeForce one; None where none bounds it.
    """

    level: Callable[["Measurement"], Optional[str]] = _no_level
    best_figure: Callable[["Measurement"], bool] = _never
    shortest_sample: Callable[["Measurement"], bool] = _never
    pipe_class: Callable[[str, bool], Optional[str]] = _no_pipe


@dataclass(frozen=True)
class PointMarker:
    """How the roofline figure draws the points of a suite: the legend ``series``, the matplotlib
    ``symbol`` (``"o"``) and its ``size`` in points; grey, or with ``by_class`` in the colour of the
    ceiling class each point sets, in the ``not_drawn`` series where that ceiling is not drawn (the
    vendor GEMMs')."""

    series: str
    symbol: str
    size: float
    by_class: bool = False
    not_drawn: str = ""


@dataclass(frozen=True)
class SuiteFigure:
    """A figure of a suite's section: written as ``<stem>.png`` and ``<stem>.svg`` beside the report
    and shown in report.html in its section, between the section's notes and its first table.

    Attributes:
        stem: the file name without extension (``"hierarchy"``).
        draw: the figure of a run, or None when the run has nothing to draw (then no file).
        caption: the HTML caption.
    """

    stem: str
    draw: Callable[[RunOf], Optional[Any]]
    caption: str


@dataclass(frozen=True)
class Section:
    """A section a suite adds to report.md and report.html, after the per-suite tables.

    Attributes:
        title: the section's heading (``"Memory hierarchy"``).
        tables: the section's tables of a run, in order; empty when the run has nothing for it (then
            the section is left out).
        order: its place among the suites' sections (ascending; suites' run order breaks a tie).
        figure: its figure, if it has one.
    """

    title: str
    tables: Callable[[RunOf], Sequence[Any]]
    order: int
    figure: Optional[SuiteFigure] = None


def optional_tables(build: Callable[[RunOf], Optional[Any]]) -> Callable[[RunOf], Sequence[Any]]:
    """A :attr:`Section.tables` of one table builder that returns None when the run has nothing for
    it: that table, or none."""

    def tables(run: RunOf) -> Sequence[Any]:
        table = build(run)
        return (table,) if table is not None else ()

    return tables


@dataclass(frozen=True)
class SuiteSpec:
    """Everything the tool knows of one suite (the BabelStream-style table entry of a suite).

    Attributes:
        name: the suite's name (``--suite NAME``), the name of its folder.
        measure: the :class:`~.base.Suite` subclass that yields its cases.
        order: its place in a run (ascending) and in the reports.
        budget_s: seconds a default run gives it (a third with ``--quick``; docs/design/budgets.md, "Time budgets").
        default: measured by a run that names no suite.
        summary: a few words for the command line's ``--suite`` help (may be empty).
        options: the options of its sweep forms, by whether the suites were named (``--suite``) or
            are the default ones: added to every suite context of the run.
        device_facts: facts recorded in the run's ``device`` when the suite is measured, from the
            device's info (the hierarchy's documented cache sizes).
        ceilings: the ceilings its rules make of a run's measurements, beside the one each kernel's
            ``ceiling_class`` sets (the hierarchy's level ceilings).
        ceiling_names: every measured ceiling name its kernels and rules can set on any device
            (``run --ceilings`` is checked against them before anything is measured).
        warnings: the warnings its rules give about a run's measurements.
        sizing_warnings: the warnings about the working sets its cases ran on, from a run's
            measurements and its suite context (STREAM arrays that fit in the last-level cache, sweep
            points shrunk once compute-bound), listed after the validation and CV warnings.
        roof_class: the compute ceiling class a measurement of the suite that sets no compute ceiling
            itself is judged against (the sweep's FMA kernels: the vector or scalar ceiling their chains
            run on), or None for none of its own (:func:`roof_class`).
        limits: how its measurements meet the physical limits where their class does not say
            (:class:`LimitRule`: the hierarchy's levels, the matrix tiles' pipes).
        drawn: whether the roofline figure draws a valid measurement of it with FLOPs as a point
            (STREAM's only above their physical limit: otherwise they are the bandwidth ceiling itself).
        marker: how the figure draws its points (:class:`PointMarker`: STREAM's grey circles, the
            vendor GEMMs' circles in their class's colour), or None for the peak kernels' diamonds
            in their class's colour.
        curves: whether the figures join its points into one curve per kernel and dtype, drawn in
            intensity order in a colour no ceiling has (the sweep's: F rising along each), instead of
            drawing each point alone; the curve's legend series is ``"<suite> <kernel> (<dtype>)"``.
        compare_class: the ceiling class a measurement of it that sets no ceiling is drawn beside, in
            that class's colour, hollow, in a series of its kernel (gemm's tiled kernel, never a
            ceiling: the vendor GEMM of its dtype), or None (drawn as :attr:`marker` says).
        disturbed: the measurements of a run its own check flags as disturbed (index -> index of the
            measurement it was judged against: gemm's ladder check), drawn hollow and grey in the
            figure's ``disturbed_series``.
        disturbed_series: the legend series of those points.
        quick_options: the options a ``--quick`` run gives it (gemm's coarser size ladder).
        figure: its own figure beside the roofline, outside any section (the sweep's): written as
            ``<stem>.png`` and ``<stem>.svg`` after the roofline's and shown in report.html after it.
        sections: what it adds to the reports (and, through their figures, the figures written).
        work: the work of each case it would measure in a context (:class:`~.work.CaseWork`, from
            the same planning as its cases, nothing allocated), for the time prediction of a
            ``--quick`` run (docs/design/budgets.md, "Time budgets"); empty: not described (its budget is
            then the default).
    """

    name: str
    measure: Type["Suite"]
    order: int
    budget_s: float
    default: bool = False
    summary: str = ""
    options: Callable[[bool], Mapping[str, Any]] = _no_options
    device_facts: Callable[[Mapping[str, Any]], Mapping[str, Any]] = _no_facts
    ceilings: Callable[[Sequence["Measurement"]], Sequence["Ceiling"]] = _none
    ceiling_names: Callable[[], Sequence[str]] = _none
    warnings: Callable[[Sequence["Measurement"]], Sequence[str]] = _none
    sizing_warnings: Callable[[Sequence["Measurement"], "SuiteContext"], Sequence[str]] = _no_sizing_warnings
    roof_class: Callable[["Measurement"], Optional[str]] = _no_class
    limits: LimitRule = LimitRule()
    drawn: Callable[["Measurement"], bool] = _always
    marker: Optional[PointMarker] = None
    curves: bool = False
    compare_class: Callable[["Measurement"], Optional[str]] = _no_class
    disturbed: Callable[[Sequence["Measurement"]], Mapping[int, int]] = _no_disturbed
    disturbed_series: str = ""
    quick_options: Mapping[str, Any] = field(default_factory=dict)
    figure: Optional[SuiteFigure] = None
    sections: Tuple[Section, ...] = ()
    work: Callable[["SuiteContext"], Sequence["CaseWork"]] = _none


_FOUND: List[Tuple["SuiteSpec", ...]] = []


def _discover() -> Tuple[SuiteSpec, ...]:
    package = importlib.import_module(__package__ or "apple_roofline.suites")
    found: Dict[str, SuiteSpec] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg or info.name in found:
            continue
        name = f"{package.__name__}.{info.name}.{SPEC_MODULE}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            raise ImportError(
                f"suites/{info.name}/ has no {SPEC_MODULE}.py: every folder of suites/ is a suite, "
                'registered by SPEC in its spec.py (docs/design/extending.md, "Adding a suite")'
            ) from None
        entry = getattr(module, "SPEC", None)
        if not isinstance(entry, SuiteSpec):
            raise TypeError(f"{name} defines no SPEC (a SuiteSpec): every folder of suites/ is a suite")
        if entry.name != info.name:
            raise ValueError(f"{name}: SPEC.name {entry.name!r} differs from its folder {info.name!r}")
        found[entry.name] = entry
    return tuple(sorted(found.values(), key=lambda s: (s.order, s.name)))


def specs() -> Tuple[SuiteSpec, ...]:
    """Every suite, in run order (discovered on the first call).

    Raises:
        ImportError: a folder of suites/ has no spec.py.
        TypeError: its spec.py defines no SPEC.
        ValueError: its SPEC names another suite than the folder.
    """
    if not _FOUND:
        _FOUND.append(_discover())
    return _FOUND[0]


def refresh() -> None:
    """Forget the suites found, so the next question discovers them again (after a folder was added
    to the package's path)."""
    _FOUND.clear()


def spec(name: str) -> SuiteSpec:
    """The suite named ``name``.

    Raises:
        KeyError: no such suite (the message names the suites).
    """
    for s in specs():
        if s.name == name:
            return s
    raise KeyError(f"no suite {name!r} (suites: {', '.join(suite_names())})")


def suite_names() -> Tuple[str, ...]:
    """Every suite's name, in run order."""
    return tuple(s.name for s in specs())


def default_suites() -> Tuple[str, ...]:
    """The suites a run measures when none are named, in run order."""
    return tuple(s.name for s in specs() if s.default)


def budgets_s() -> Dict[str, float]:
    """Each suite's default budget, seconds, in run order."""
    return {s.name: s.budget_s for s in specs()}


def suite_options(named: bool) -> Dict[str, Any]:
    """The sweep-form options of every suite, for a run whose suites were named (``named``) or not."""
    out: Dict[str, Any] = {}
    for s in specs():
        out.update(s.options(named))
    return out


def device_facts(names: Sequence[str], info: Mapping[str, Any]) -> Dict[str, Any]:
    """The device facts the suites ``names`` record (:attr:`SuiteSpec.device_facts`)."""
    out: Dict[str, Any] = {}
    for s in specs():
        if s.name in names:
            out.update(s.device_facts(info))
    return out


def case_work(name: str, ctx: "SuiteContext") -> Tuple["CaseWork", ...]:
    """The work of each case the suite ``name`` would measure in ``ctx`` (:attr:`SuiteSpec.work`);
    empty where the suite does not describe it.

    Raises:
        KeyError: no such suite.
    """
    return tuple(spec(name).work(ctx))


def suite_ceilings(measurements: Sequence["Measurement"]) -> List["Ceiling"]:
    """The ceilings every suite's rules make of ``measurements``."""
    return [c for s in specs() for c in s.ceilings(measurements)]


def suite_ceiling_names() -> List[str]:
    """Every measured ceiling name any suite can set (:attr:`SuiteSpec.ceiling_names`), in run order."""
    return [n for s in specs() for n in s.ceiling_names()]


def roof_class(m: "Measurement") -> Optional[str]:
    """The compute ceiling class ``m`` is judged against: the one it sets (a compute ``ceiling_class``),
    else its suite's :attr:`SuiteSpec.roof_class` (None for a suite not registered here)."""
    if m.ceiling_kind == "compute" and m.ceiling_class is not None:
        return m.ceiling_class
    found = [s for s in specs() if s.name == m.suite]
    return found[0].roof_class(m) if found else None


def _registered(suite: str) -> Optional[SuiteSpec]:
    found = [s for s in specs() if s.name == suite]
    return found[0] if found else None


def limit_rule(suite: str) -> LimitRule:
    """:attr:`SuiteSpec.limits` of ``suite`` (the rule of no suite's own for one not registered here)."""
    s = _registered(suite)
    return s.limits if s is not None else LimitRule()


def pipe_class(ceiling_class: str, geforce: bool) -> Optional[str]:
    """The theoretical class whose peak bounds the compute class ``ceiling_class`` where no
    theoretical ceiling has its name: the first suite's :attr:`LimitRule.pipe_class` that names one."""
    for s in specs():
        name = s.limits.pipe_class(ceiling_class, geforce)
        if name is not None:
            return name
    return None


def drawn(m: "Measurement") -> bool:
    """Whether the roofline figure draws ``m`` (valid, with FLOPs) as a point: its suite's
    :attr:`SuiteSpec.drawn` (True for a suite not registered here)."""
    s = _registered(m.suite)
    return s.drawn(m) if s is not None else True


def point_marker(suite: str) -> Optional[PointMarker]:
    """:attr:`SuiteSpec.marker` of ``suite`` (None for a suite not registered here)."""
    s = _registered(suite)
    return s.marker if s is not None else None


def curves(suite: str) -> bool:
    """:attr:`SuiteSpec.curves` of ``suite``: whether the figures join its points into one curve per
    kernel and dtype (False for a suite not registered here)."""
    s = _registered(suite)
    return s.curves if s is not None else False


def compare_class(m: "Measurement") -> Optional[str]:
    """The ceiling class ``m``, which sets none, is drawn beside: its suite's
    :attr:`SuiteSpec.compare_class`; None where ``m`` sets a class or its suite names none."""
    s = _registered(m.suite)
    return s.compare_class(m) if s is not None and not m.ceiling_class else None


def disturbed(measurements: Sequence["Measurement"]) -> Dict[int, str]:
    """Index of each of ``measurements`` a suite's own check flags as disturbed
    (:attr:`SuiteSpec.disturbed`) -> the legend series it is drawn in."""
    return {i: s.disturbed_series for s in specs() for i in s.disturbed(measurements)}


def quick_options() -> Dict[str, Any]:
    """The options a ``--quick`` run gives every suite (:attr:`SuiteSpec.quick_options`)."""
    out: Dict[str, Any] = {}
    for s in specs():
        out.update(s.quick_options)
    return out


def suite_warnings(measurements: Sequence["Measurement"]) -> List[str]:
    """The warnings every suite's rules give about ``measurements``."""
    return [w for s in specs() for w in s.warnings(measurements)]


def sizing_warnings(measurements: Sequence["Measurement"], ctx: "SuiteContext") -> List[str]:
    """The warnings of every suite (:attr:`SuiteSpec.sizing_warnings`) about the working sets the cases
    of ``measurements`` ran on in the run's suite context ``ctx``, in run order."""
    return [w for s in specs() for w in s.sizing_warnings(measurements, ctx)]


def sections() -> List[Tuple[SuiteSpec, Section]]:
    """Every suite's report sections with their suite, in report order (:attr:`Section.order`, then
    run order)."""
    ranked = [(sec.order, i, s, sec) for i, s in enumerate(specs()) for sec in s.sections]
    return [(s, sec) for _order, _i, s, sec in sorted(ranked, key=lambda r: (r[0], r[1]))]


def own_figures() -> List[Tuple[SuiteSpec, SuiteFigure]]:
    """Every suite's own figure beside the roofline (:attr:`SuiteSpec.figure`), in run order."""
    return [(s, s.figure) for s in specs() if s.figure is not None]


def figures() -> List[Tuple[SuiteSpec, SuiteFigure]]:
    """Every suite's figures with their suite, in report order."""
    return [(s, sec.figure) for s, sec in sections() if sec.figure is not None]
