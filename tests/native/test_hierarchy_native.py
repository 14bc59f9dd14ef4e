"""The hierarchy suite on this machine's CPU (docs/design.md, "The memory hierarchy"): every point
validated, and the plateau finder on the measured curve finds the levels where the host's cache
facts (sysfs, as lscpu totals them) put them.

What a core gets of each level is the machine's, not the code's, so the assertions hold on any
host: the per-core levels (L1d, L2) end within one step of the sweep of their documented sizes;
a shared last level ends at or below its documented size (within a step) and above the L2's, since
a guest or a busy host may get only part of it (a 2-vCPU KVM guest of a Xeon with 260 MiB of L3
leaves it between 128 and 181 MiB), and it may serve two cores no faster than DRAM, and then has no
plateau; DRAM is last. The curve is measured, so a machine busy with other work can disturb it; the
finder works on each point's best sample and a median-of-three filter for that reason. The measured
plateaus are printed (``-s``)."""

from __future__ import annotations

import math
from typing import Any, Optional

import pytest

from apple_roofline.sizes import format_size
from apple_roofline.suites.hierarchy.levels import level_ceilings, level_curves
from apple_roofline.suites.hierarchy.plateaus import DRAM
from apple_roofline.suites.hierarchy.suite import STEPS_PER_OCTAVE
from apple_roofline.theoretical.caches import cache_levels


def _print(curve) -> None:  # type: ignore[no-untyped-def]
    for p in curve.plateaus:
        edge = format_size(int(p.edge)) if p.edge else "-"
        print(
            f"  {curve.kernel}: {p.level:5s} {p.gbps:8.1f} GB/s  {format_size(p.lo)} to {format_size(p.hi)}, "
            f"edge {edge}, documented {format_size(p.capacity) if p.capacity else '-'}"
        )


def test_the_quick_sweep_finds_every_cpu_level_at_its_documented_size() -> None:
    from apple_roofline.devices import open_device
    from apple_roofline.roofline.runner import run_roofline

    documented, _notes = cache_levels(open_device("cpu").info())
    names = [lv.name for lv in documented]
    if names[:3] != ["L1d", "L2", "L3"]:
        pytest.skip(f"this host reports the caches {names}, not L1d, L2 and L3")
    # A sweep is a measurement: on a 2-core virtual machine a neighbour can blur one level into the
    # next (seen in CI's own tree: L2 lost once, an L3 edge 1.46x its size once), so a sweep that
    # does not show the levels is measured once more, and the second one is judged.
    for attempt in range(2):
        run = run_roofline("cpu", ["hierarchy"], quick=True, telemetry=False)
        assert run.measurements and all(m.valid for m in run.measurements), [
            m.validation for m in run.measurements if not m.valid
        ]
        print()
        for curve in level_curves(run.measurements):
            _print(curve)
        wrong = _levels_wrong(run, documented)
        if wrong is None:
            break
    assert wrong is None, wrong


def _levels_wrong(run: Any, documented: Any) -> Optional[str]:
    """Why the quick sweep's read curve does not show the documented levels (None when it does):
    private levels end within a step of their size, a shared L3's plateau at or below its size and
    its edge above the L2 and within two steps of its size, DRAM last, and the level ceilings are
    those of the plateaus found."""
    read = next(c for c in level_curves(run.measurements) if c.kernel == "read")
    step = 2 ** (2 / STEPS_PER_OCTAVE)  # quick: two points per octave
    found = [p.level for p in read.plateaus]
    if found not in (["L1d", "L2", "L3", DRAM], ["L1d", "L2", DRAM]):
        return f"levels {found}"
    for p, nxt in zip(read.plateaus, read.plateaus[1:]):
        if p.capacity is None or p.edge is None:
            return f"no size or edge: {p}"
        if p.level == "L3":  # shared: all of it or a share; its edge within two steps of its size
            # (on the 2-vCPU EPYC guest under CI's own load the edge, the curve's midpoint crossing
            # between L3 and DRAM, came out at 1.46x and 1.62x the documented 32 MiB: AMD's L3 is a
            # victim of the L2s and a neighbour's share of it moves; two steps, 2x, still tell it from
            # DRAM and from the L2)
            if not (p.hi / step <= p.capacity and documented[1].capacity < p.edge <= p.capacity * step * step):
                return f"L3 edge: {p}, {nxt}"
            continue
        # the documented size lies between the plateau's last point and the next one's first, within a step
        if not p.hi / step <= p.capacity <= nxt.lo * step:
            return f"size outside the plateau's reach: {p}, {nxt}"
        if abs(math.log(p.edge / p.capacity)) > math.log(step) + math.log(nxt.lo / p.hi):
            return f"edge: {p}"
    got = {c.name for c in level_ceilings(run.measurements)}
    want = {f"{n} bandwidth" for n in found[:-1]}
    return None if got == want else f"level ceilings {sorted(got)}, not {sorted(want)}"


def test_the_default_run_measures_one_ceiling_per_level(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.roofline import runner
    from apple_roofline.roofline.report import to_markdown

    monkeypatch.setattr(runner.registry, "default_suites", lambda: ("hierarchy",))
    # As above: a neighbour on a 2-core virtual machine can blur one level into the next (CI's own
    # tree, 2026-11-27: L2 "could not be told apart" once), so a run that lacks a level is measured
    # once more and the second one is judged.
    for attempt in range(2):
        run = runner.run_roofline("cpu", None, quick=True, telemetry=False)
        assert all(m.valid for m in run.measurements)
        assert {m.params["sweep"] for m in run.measurements if "sweep" in m.params} == {"levels"}
        documented = [lv["name"] for lv in run.device["cache_levels"]["levels"]]
        points = [m for m in run.measurements if m.kernel == "read"]
        assert len(points) == len(documented) + 1  # quick: one point per level and one beyond the last
        levels = {c.name for c in run.ceilings if c.is_level}
        if levels == {f"{n} bandwidth" for n in documented}:
            break
    assert levels == {f"{n} bandwidth" for n in documented}
    assert "## Memory hierarchy" in to_markdown(run)
    (t,) = run.suite_times
    assert t.suite == "hierarchy" and not t.cut
