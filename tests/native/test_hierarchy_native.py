"""The hierarchy suite on this machine's CPU (docs/design/hierarchy.md, "The memory hierarchy"): every point
validated, and what the tool says of each level consistent with what it found: each plateau a
documented level (or DRAM) in working-set order, told apart with its ceiling at the plateau's rate or
named in a warning as not told apart, and no other level ceiling.

What a core gets of each level is the machine's, not the code's, and a busy 2-core machine blurs one
level into the next, so no test here asserts where a level ends or that it was told apart; that is a
benchmark, bench/bench_hierarchy_cpu.py. The measured plateaus are printed (``-s``)."""

from __future__ import annotations

from typing import Any, List, Sequence

import pytest

from apple_roofline.sizes import format_size
from apple_roofline.suites.hierarchy.levels import level_curves
from apple_roofline.suites.hierarchy.plateaus import DRAM
from apple_roofline.theoretical.caches import cache_levels


def _print(curve) -> None:  # type: ignore[no-untyped-def]
    for p in curve.plateaus:
        edge = format_size(int(p.edge)) if p.edge else "-"
        print(
            f"  {curve.kernel}: {p.level:5s} {p.gbps:8.1f} GB/s  {format_size(p.lo)} to {format_size(p.hi)}, "
            f"edge {edge}, documented {format_size(p.capacity) if p.capacity else '-'}"
        )


def _level_words(run: Any) -> List[str]:
    """Every documented level or DRAM each tool output of ``run`` speaks of: the ceilings and the
    warnings (what the tool says; whether a level was told apart is the machine's)."""
    return [c.name for c in run.ceilings if c.is_level] + list(run.warnings)


def _says_each_level(run: Any, documented: Sequence[str]) -> None:
    """Every plateau the read curve found is a documented level or DRAM, in working-set order; a level
    told apart has its ceiling at the plateau's rate, one not told apart is named in a warning and
    sets no ceiling; and every level ceiling is such a plateau's."""
    read = next(c for c in level_curves(run.measurements) if c.kernel == "read")
    names = [p.level for p in read.plateaus]
    order = [*documented, DRAM]
    assert all(n in order for n in names) and names == sorted(names, key=order.index), names
    ceilings = {c.name: c for c in run.ceilings if c.is_level}
    for p in read.plateaus:
        if p.level == DRAM:
            continue
        if p.resolved:
            assert ceilings[f"{p.level} bandwidth"].value == p.gbps, p
        else:
            assert f"{p.level} bandwidth" not in ceilings, p
            assert any(f"the {p.level} level could not be told apart: " in w for w in run.warnings), run.warnings
    told = {f"{p.level} bandwidth" for p in read.plateaus if p.resolved and p.level != DRAM}
    assert set(ceilings) == told, (sorted(ceilings), sorted(told))


def test_the_quick_sweep_says_of_each_cpu_level_whether_it_told_it_apart() -> None:
    """What a sweep shows is the machine's (a neighbour on a 2-core virtual machine blurs one level into
    the next); what the tool says of it is the code's: each level it found is a documented one, told
    apart with its ceiling or named as not told apart. Whether the levels land at their documented
    sizes is a benchmark: bench/bench_hierarchy_cpu.py."""
    from apple_roofline.devices import open_device
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    documented, _notes = cache_levels(open_device("cpu").info())
    run = run_roofline(RunOptions(device="cpu", suites=["hierarchy"], quick=True, telemetry=False))
    assert run.measurements and all(m.valid for m in run.measurements), [
        m.validation for m in run.measurements if not m.valid
    ]
    print()
    for curve in level_curves(run.measurements):
        _print(curve)
    _says_each_level(run, [lv.name for lv in documented])


def test_the_default_run_says_of_each_level_whether_it_told_it_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.views.report import to_markdown

    monkeypatch.setattr(runner.registry, "default_suites", lambda: ("hierarchy",))
    run = runner.run_roofline(RunOptions(device="cpu", suites=None, quick=True, telemetry=False))
    assert all(m.valid for m in run.measurements)
    assert {m.params["sweep"] for m in run.measurements if "sweep" in m.params} == {"levels"}
    documented = [lv["name"] for lv in run.device["cache_levels"]["levels"]]
    points = [m for m in run.measurements if m.kernel == "read"]
    # a few points inside each documented level and DRAM's beyond them all (how many: the sizes')
    assert {m.params["level"] for m in points} == {*documented, DRAM}
    _says_each_level(run, documented)
    assert "## Memory hierarchy" in to_markdown(run)
    (t,) = run.suite_times
    assert t.suite == "hierarchy" and not t.cut
