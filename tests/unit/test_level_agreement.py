"""A hierarchy level only from points that tell it apart (docs/design/hierarchy.md, "The memory hierarchy"):
curves seen on an H200 and on a 2-vCPU Xeon guest, replayed, and the recorded curves of
test_hierarchy.py, which must keep their levels."""

from __future__ import annotations

from typing import Callable, Dict, List, Sequence, Tuple

import pytest

from apple_roofline.roofline import Measurement, Run
from apple_roofline.suites.hierarchy.agreement import CAP, FLOOR, MARGIN, level_tolerance, settle
from apple_roofline.suites.hierarchy.levels import level_ceilings, level_curves, level_warnings
from apple_roofline.suites.hierarchy.plateaus import DRAM, Level, Plateau, find_plateaus, level_groups
from apple_roofline.suites.hierarchy.suite import dram_points, sweep_points
from apple_roofline.suites.hierarchy.table import hierarchy_table
from apple_roofline.theoretical.caches import CacheLevel, dram_start, level_of
from test_hierarchy import EPYC, XEON_VM, XEON_VM_READ, curve  # tests/unit, on the path as every test's folder is

MiB = 1 << 20
#: An H200's documented levels: one SM's 256 KiB L1, the 60 MiB L2.
H200 = (Level("L1", 256 << 10), Level("L2", 60 * MiB))
#: An H200's HBM3e interface peak, GB/s (the issue's figure): no DRAM level may lie above it.
H200_HBM_PEAK = 4814.0


def settled(
    points: Sequence[Tuple[int, float]], levels: Sequence[Level], full: bool = True, cv: float = 0.0
) -> List[Plateau]:
    found = find_plateaus(points, levels, min_points=2) if full else level_groups(points, levels)
    return settle(found, points, [cv] * len(points), levels)


def by_level(plateaus: Sequence[Plateau]) -> Dict[str, Plateau]:
    return {p.level: p for p in plateaus}


def run_of(
    make_m: Callable[..., Measurement],
    levels: Sequence[Level],
    curves: Sequence[Tuple[str, Sequence[Tuple[int, float]]]],
    form: str = "levels",
    noisy: bool = False,
) -> List[Measurement]:
    """Hierarchy measurements of each (kernel, points) curve, planned against ``levels``."""
    caches = [CacheLevel(lv.name, lv.capacity, "test") for lv in levels]
    ms = []
    for kernel, pts in curves:
        for ws, rate in pts:
            home = level_of(ws, caches)
            ms.append(
                make_m(
                    "hierarchy",
                    kernel,
                    "u32",
                    flops=0,
                    bytes=ws * 16,
                    gbps=rate,
                    noisy=noisy,
                    params={
                        "working_set_bytes": ws,
                        "level": home.name if home else DRAM,
                        "level_bytes": home.capacity if home else 0,
                        "sweep": form,
                    },
                )
            )
    return ms


# ---- the tolerance ------------------------------------------------------------------------------------


def test_the_tolerance_follows_the_samples_spread_within_its_bounds() -> None:
    assert level_tolerance([]) == FLOOR and level_tolerance([0.001, 0.002]) == FLOOR
    assert level_tolerance([0.12, 0.13, 0.11]) == pytest.approx(0.12)
    assert level_tolerance([0.4, 0.5]) == CAP  # a noisy machine never merges two levels
    with pytest.raises(ValueError, match="spreads"):
        settle([], [(4096, 1.0)], [], EPYC)


# ---- the H200: DRAM points still in the L2's reach ------------------------------------------------------


def h200_default(dram: Sequence[Tuple[int, float]]) -> List[Tuple[int, float]]:
    return [(64 << 10, 30000.0), (128 << 10, 30100.0), (15 * MiB, 10000.0), (30 * MiB, 9900.0), *dram]


def test_an_h200_dram_level_of_cache_inflated_points_is_not_set() -> None:
    """The default run on an H200 (tree f22d365): 240 MiB (4x the L2) read 5,130 GB/s, above the
    HBM's 4,814 GB/s peak, and 467 MiB 4,407 GB/s; their median (4,776) was printed as DRAM. The
    two disagree, neither lies 21x beyond the caches, and the larger does not agree with the one an
    octave below it: DRAM could not be told apart."""
    found = by_level(settled(h200_default([(240 * MiB, 5130.0), (467 * MiB, 4407.0)]), H200, full=False))
    assert found[DRAM].unresolved and "beyond the caches" in found[DRAM].unresolved
    assert found["L1"].resolved and found["L2"].resolved  # the caches keep their levels


def test_an_h200_dram_level_from_the_new_working_sets_is_below_the_interface_peak() -> None:
    """The two H200 points fit a cache that keeps a full L2 of every pass (hit fraction C / W: 0.252
    at 240 MiB) over a DRAM rate of 3.84 TB/s; at the planned DRAM points (21x and 42x the caches)
    that L2 adds at most 5 %, the points agree, and the level lies under the interface peak."""
    caches = [CacheLevel(lv.name, lv.capacity, "t") for lv in H200]
    dram = dram_points(caches)
    assert dram == [dram_start(sum(lv.capacity for lv in H200)), 2 * dram_start(sum(lv.capacity for lv in H200))]
    c = sum(lv.capacity for lv in H200)
    # the model, fitted to the two points seen: 5130 (1 - h) = B with h = C/W, and 4407 (1 - h') = B
    bound = 5130.0 * (1 - 60 * MiB / (240 * MiB))
    assert 4407.0 * (1 - 60 * MiB / (467 * MiB)) == pytest.approx(bound, rel=0.01)
    pts = h200_default([(w, bound / (1 - c / w)) for w in dram])
    found = by_level(settled(pts, H200, full=False))
    assert found[DRAM].resolved and found[DRAM].gbps < H200_HBM_PEAK
    assert found[DRAM].gbps <= bound * 1.05


# ---- a 2-vCPU Xeon guest: a noisy L3 ----------------------------------------------------------------------


def xeon_default(l3: Sequence[Tuple[int, float]], dram: Sequence[Tuple[int, float]]) -> List[Tuple[int, float]]:
    return [(24 << 10, 480.0), (48 << 10, 470.0), (1 * MiB, 284.0), (2 * MiB, 279.0), *l3, *dram]


def test_an_l3_of_two_disagreeing_points_could_not_be_told_apart(make_m: Callable[..., Measurement]) -> None:
    """The default run's L3 (33.9 GB/s) was the mean of 40.4 GB/s at 65 MiB and 23.5 GB/s, DRAM's
    speed, at 130 MiB: not a level; the report says so and no L3 ceiling is made."""
    dram = [(w, 24.2) for w in dram_points([CacheLevel(lv.name, lv.capacity, "t") for lv in XEON_VM], limit=4 << 30)]
    pts = xeon_default([(65 * MiB, 40.4), (130 * MiB, 23.5)], dram)
    found = by_level(settled(pts, XEON_VM, full=False))
    assert "disagree" in found["L3"].unresolved and "40.4" in found["L3"].unresolved
    assert found["L2"].resolved and found[DRAM].resolved and found[DRAM].gbps == pytest.approx(24.2)
    ms = run_of(make_m, XEON_VM, [("read", pts)])
    assert [c.name for c in level_ceilings(ms)] == ["L1d bandwidth", "L2 bandwidth"]
    why = by_level(level_curves(ms)[0].plateaus)["L3"].unresolved
    assert "disagree" in why and level_warnings(ms) == [
        f"hierarchy/read/u32: the L3 level could not be told apart: {why}"
    ]


def test_an_l3_below_dram_could_not_be_told_apart() -> None:
    """A --quick run: L3 22.3 GB/s at 130 MiB, DRAM 24.2 GB/s: the L3 is not faster than DRAM."""
    dram = [
        (w, 24.2)
        for w in dram_points([CacheLevel(lv.name, lv.capacity, "t") for lv in XEON_VM], quick=True, limit=4 << 30)
    ]
    found = by_level(settled(xeon_default([(130 * MiB, 22.3)], dram), XEON_VM, full=False))
    assert found["L3"].unresolved.startswith("not faster than DRAM")
    assert found["L2"].resolved and found["L1d"].resolved
    # faster, but within MARGIN, is no level either; beyond it, one
    for rate, told in ((24.2 * (1 + MARGIN / 2), False), (24.2 * (1 + 2 * MARGIN), True)):
        assert by_level(settled(xeon_default([(130 * MiB, rate)], dram), XEON_VM, full=False))["L3"].resolved == told


def test_rmw_in_dram_from_one_point_near_the_l3_could_not_be_told_apart(make_m: Callable[..., Measurement]) -> None:
    """A --quick run's rmw read 46.8 GB/s in DRAM against 24.2 GB/s for reads, each from one point at
    4x the documented L3 (1,040 MiB): within the caches' reach (21x them is 5.4 GiB) and with no
    point an octave below to show the curve flat, neither DRAM level is set."""
    old = [(24 << 10, 480.0), (1 * MiB, 284.0), (130 * MiB, 56.0), (1040 * MiB, 24.2)]
    rmw = [(w, g * 0.9) for w, g in old[:-1]] + [(1040 * MiB, 46.8)]
    curves = {
        c.kernel: by_level(c.plateaus) for c in level_curves(run_of(make_m, XEON_VM, [("read", old), ("rmw", rmw)]))
    }
    assert "beyond the caches" in curves["read"][DRAM].unresolved
    assert "beyond the caches" in curves["rmw"][DRAM].unresolved


def test_a_noisy_machine_widens_the_tolerance_but_not_past_a_level_step(make_m: Callable[..., Measurement]) -> None:
    """Two L2 points 24 % apart (11 % either side of their median) disagree on a quiet machine; where
    the samples spread by 13 % (their CV) they agree, but the L3's 40.4 and 23.5 GB/s never do."""
    dram = [(w, 24.2) for w in dram_points([CacheLevel(lv.name, lv.capacity, "t") for lv in XEON_VM], limit=4 << 30)]
    pts = [
        (24 << 10, 480.0),
        (48 << 10, 470.0),
        (1 * MiB, 310.0),
        (2 * MiB, 250.0),
        (65 * MiB, 40.4),
        (130 * MiB, 23.5),
        *dram,
    ]
    quiet = level_curves(run_of(make_m, XEON_VM, [("read", pts)]))[0]
    noisy = level_curves(run_of(make_m, XEON_VM, [("read", pts)], noisy=True))[0]
    assert quiet.measurements[0].cv < FLOOR < noisy.measurements[0].cv < CAP
    assert "disagree" in by_level(quiet.plateaus)["L2"].unresolved
    assert by_level(noisy.plateaus)["L2"].resolved
    assert not by_level(noisy.plateaus)["L3"].resolved


# ---- the recorded curves keep their levels -------------------------------------------------------------------


def test_the_recorded_xeon_sweep_keeps_its_levels_and_dram_starts_where_the_curve_is_flat() -> None:
    pts = [(int(kib * 1024), float(g)) for kib, g in XEON_VM_READ]
    found = settled(pts, XEON_VM)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM] and all(p.resolved for p in found)
    dram = found[-1]
    # counted from the first point that agrees with the one an octave below it beyond the L3
    assert dram.gbps == pytest.approx(32.0) and dram.dropped >= 1


def test_the_recorded_h100_sweep_keeps_its_levels() -> None:
    levels = (Level("L1", 256 << 10), Level("L2", 50 * MiB))
    pts = [
        (
            w,
            32400.0
            if w <= 230 << 10
            else 19000.0
            if w <= 1500 << 10
            else 12000.0
            if w < 2400 << 10
            else 8000.0
            if w <= 48 * MiB
            else 6000.0
            if w <= 80 * MiB
            else 3200.0,
        )
        for w in sweep_points(400 * MiB)
    ]
    found = settled(pts, levels, full=True)
    assert [(p.level, round(p.gbps), p.resolved) for p in found] == [
        ("L1", 32400, True),
        ("L2", 8000, True),
        (DRAM, 3200, True),
    ]


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_the_epyc_curves_keep_their_levels_with_noise_and_disturbed_points(seed: int) -> None:
    pts = curve(
        [(64 << 10, 440.0), (2 << 20, 236.0), (32 << 20, 197.0), (None, 20.0)],
        noise=0.02,
        seed=seed,
        disturbed=(5, 22, 41),
    )
    found = settled(pts, EPYC)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM] and all(p.resolved for p in found), found
    assert [round(p.gbps / g, 1) for p, g in zip(found, (440, 236, 197, 20))] == [1.0] * 4
    assert found[0].dropped >= 1  # the disturbed point at a third of the L1d's rate is left out


def test_an_unresolved_level_is_said_in_the_report_not_printed(make_m: Callable[..., Measurement], m5_run: Run) -> None:
    dram = [(w, 24.2) for w in dram_points([CacheLevel(lv.name, lv.capacity, "t") for lv in XEON_VM], limit=4 << 30)]
    ms = run_of(make_m, XEON_VM, [("read", xeon_default([(65 * MiB, 40.4), (130 * MiB, 23.5)], dram))])
    run = Run(**{**m5_run.__dict__, "measurements": tuple(ms), "ceilings": ()})
    table = hierarchy_table(run)
    assert table is not None
    l3 = next(r for r in table.rows if r[1] == "L3")
    assert "could not be told apart" in " ".join(l3) and "33.9" not in " ".join(l3)
    assert any("could not be told apart" in n for n in table.notes)


def test_the_figure_draws_no_bar_for_an_unresolved_level(make_m: Callable[..., Measurement]) -> None:
    from apple_roofline.suites.hierarchy.plot import plot_hierarchy

    dram = [(w, 24.2) for w in dram_points([CacheLevel(lv.name, lv.capacity, "t") for lv in XEON_VM], limit=4 << 30)]
    fig = plot_hierarchy(run_of(make_m, XEON_VM, [("read", xeon_default([(65 * MiB, 40.4), (130 * MiB, 23.5)], dram))]))
    gids = {a.get_gid() for a in fig.findobj() if a.get_gid()}
    assert {"plateau:read:L1d", "plateau:read:L2", "plateau:read:DRAM"} <= gids
    assert "plateau:read:L3" not in gids and "hierarchy:unresolved" in gids
