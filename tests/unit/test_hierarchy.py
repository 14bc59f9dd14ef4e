"""The memory hierarchy: the plateau finder on synthetic curves, the level ceilings a run derives
from its hierarchy measurements, the suite's working sets and pass counts, and its NumPy references
against a word-by-word emulation of the kernels (docs/design/hierarchy.md, "The memory hierarchy")."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np
import pytest

from apple_roofline.roofline import Ceiling, Measurement, RooflineModel, Run
from apple_roofline.suites.hierarchy.levels import level_ceilings, level_curves
from apple_roofline.suites.hierarchy.plateaus import DRAM, Level, find_plateaus, level_groups, nominal_level
from apple_roofline.suites.hierarchy.suite import (
    MASK,
    MIN_WORKING_SET,
    STEPS_PER_OCTAVE,
    WORD,
    dram_points,
    level_points,
    passes_for,
    plan_lanes,
    read_total,
    rmw_total,
    sweep_points,
    word_sums,
)
from apple_roofline.theoretical import caches, nvidia_by_name
from apple_roofline.theoretical.caches import CacheLevel, cache_levels, dram_start, hierarchy_facts, level_of, slc_level
from apple_roofline.theoretical.nvidia_by_name import DriverFacts, cuda_backend_facts, nvml_facts

#: The documented levels of the 2-core EPYC the suite was developed on, as lscpu totals them.
EPYC = (Level("L1d", 64 << 10), Level("L2", 2 << 20), Level("L3", 32 << 20))
STEP = 2 ** (1 / STEPS_PER_OCTAVE)


def curve(
    rates: Sequence[Tuple[Optional[int], float]],
    *,
    noise: float = 0.0,
    seed: int = 0,
    disturbed: Sequence[int] = (),
    blur: float = 1.15,
) -> List[Tuple[int, float]]:
    """The full sweep's working sets with a rate per level: ``rates`` = [(capacity or None, GB/s)],
    each rate holding up to its capacity, falling over a factor ``blur`` after it (geometric
    interpolation to the next level's rate), times lognormal ``noise``; points of index in
    ``disturbed`` run at a third of their rate."""
    rng = np.random.default_rng(seed)
    out = []
    for i, ws in enumerate(sweep_points(512 << 20)):
        rate = rates[-1][1]
        for k, (cap, r) in enumerate(rates):
            if cap is None or ws <= cap:
                rate = r
                break
            if ws <= cap * blur:
                f = math.log(ws / cap) / math.log(blur)
                rate = math.exp((1 - f) * math.log(r) + f * math.log(rates[k + 1][1]))
                break
        rate *= math.exp(rng.normal(0.0, noise)) if noise else 1.0
        out.append((ws, rate / 3 if i in disturbed else rate))
    return out


def by_level(plateaus):  # type: ignore[no-untyped-def]
    return {p.level: p for p in plateaus}


def test_clean_steps_are_found_at_the_documented_sizes() -> None:
    pts = curve([(64 << 10, 440.0), (2 << 20, 236.0), (32 << 20, 197.0), (None, 20.0)])
    found = find_plateaus(pts, EPYC, min_points=3)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM]
    for p, lv in zip(found, EPYC):
        assert p.capacity == lv.capacity
        assert p.edge is not None and abs(math.log(p.edge / lv.capacity)) <= math.log(STEP)
    assert [round(p.gbps) for p in found] == [440, 236, 197, 20]
    assert found[-1].edge is None and found[-1].capacity is None


def test_noise_and_disturbed_points_do_not_move_the_levels() -> None:
    # 3 % noise, and single points at a third of their rate (a loaded machine's disturbed samples)
    pts = curve(
        [(64 << 10, 440.0), (2 << 20, 236.0), (32 << 20, 197.0), (None, 20.0)],
        noise=0.03,
        seed=4,
        disturbed=(5, 22, 41),
    )
    found = find_plateaus(pts, EPYC, min_points=3)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM]
    for p, lv in zip(found, EPYC):
        assert p.edge is not None and abs(math.log(p.edge / lv.capacity)) <= math.log(STEP)
    assert found[0].gbps == pytest.approx(440.0, rel=0.05)


def test_a_level_the_curve_does_not_show_gets_no_plateau() -> None:
    """An L1 as fast as the L2 behind it (an H100's for a whole-device read): one plateau, named by
    the level at its edge, not the smallest level."""
    levels = (Level("L1", 256 << 10), Level("L2", 50 << 20))
    pts = curve([(50 << 20, 5500.0), (None, 3000.0)])
    found = find_plateaus(pts, levels, min_points=3)
    assert [p.level for p in found] == ["L2", DRAM]


def test_a_disturbed_stretch_does_not_rename_the_levels() -> None:
    """Points at 3/4 of their level's rate (another process on the machine) make runs of their own:
    just above the L1d's capacity, in the L2's range, a stretch that is no plateau (the L2's rate
    stays the L2's); at the top of the L1d's range, the run that ends where the L1d does, joined by
    the run below it. Either way every level keeps its name."""
    rates = [(64 << 10, 440.0), (2 << 20, 236.0), (32 << 20, 197.0), (None, 20.0)]
    pts = [(w, g * 0.75 if 300 << 10 <= w <= 600 << 10 else g) for w, g in curve(rates)]
    found = find_plateaus(pts, EPYC, min_points=3)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM]
    assert [round(p.gbps) for p in found] == [440, 236, 197, 20] and found[1].lo > 600 << 10
    pts = [(w, g * 0.75 if 20 << 10 <= w <= 64 << 10 else g) for w, g in curve(rates)]
    found = find_plateaus(pts, EPYC, min_points=3)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM]
    # the undisturbed run below it lies within no level's transition: it is the L1d's too
    assert found[0].lo == MIN_WORKING_SET and found[0].points == 17 and found[0].gbps == pytest.approx(440.0)


def test_a_gradual_transition_belongs_to_no_level() -> None:
    """An H100's read (2026-11-26): 32 TB/s in L1 to 220 KiB, about 19 TB/s from 256 KiB to 1.5 MiB
    (L1 hits thinning out), 8 TB/s in L2 from 2.5 MiB, 3.2 TB/s in DRAM: the middle stretch is no
    plateau, so the L2's rate is the L2's."""
    levels = (Level("L1", 256 << 10), Level("L2", 50 << 20))
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
            if w <= 48 << 20
            else 6000.0
            if w <= 80 << 20
            else 3200.0,
        )
        for w in sweep_points(400 << 20)
    ]
    found = find_plateaus(pts, levels, min_points=3)
    assert [p.level for p in found] == ["L1", "L2", DRAM]
    assert [round(p.gbps) for p in found] == [32400, 8000, 3200]
    assert found[1].lo > 2 << 20


#: A quick sweep's read on a 2-vCPU KVM guest of an Intel Xeon (family 6, model 207; 2026-11-26):
#: (working set in KiB, GB/s at the best sample). sysfs documents an L3 of 260 MiB; the guest's reads
#: leave it between 128 and 181 MiB (its share of the host's L3).
XEON_VM = (Level("L1d", 96 << 10), Level("L2", 4 << 20), Level("L3", 260 << 20))
XEON_VM_READ = [
    (4, 446),
    (5.5, 444),
    (8, 476),
    (11, 429),
    (16, 491),
    (22.5, 489),
    (32, 442),
    (45, 420),
    (64, 533),
    (90.5, 530),
    (128, 280),
    (181, 281),
    (256, 281),
    (362, 282),
    (512, 282),
    (724, 282),
    (1024, 284),
    (1448, 279),
    (2048, 279),
    (2896, 228),
    (4096, 115),
    (5793, 66),
    (8192, 59),
    (11585, 58),
    (16384, 58),
    (23170, 58),
    (32768, 58),
    (46341, 58),
    (65536, 57),
    (92682, 57),
    (131072, 54),
    (185364, 36),
    (262144, 32),
    (370728, 30),
    (524288, 32),
    (741455, 32),
    (1048576, 32),
    (1482910, 32),
    (2097152, 32),
]


def test_a_last_run_far_beyond_every_cache_is_dram() -> None:
    """The last run reaches 8× the documented L3 though it starts below it: DRAM, not L3, and the
    run before it (58 GB/s, 5.7 to 128 MiB) is the L3, its edge where the guest's share of it ends."""
    pts = [(int(kib * 1024), float(g)) for kib, g in XEON_VM_READ]
    found = find_plateaus(pts, XEON_VM, min_points=2)
    assert [p.level for p in found] == ["L1d", "L2", "L3", DRAM]
    l3, dram = found[2], found[3]
    assert l3.lo < 8 << 20 and l3.hi == 128 << 20 and 128 << 20 < (l3.edge or 0) < 181 << 20
    assert dram.lo > 181 << 20 and dram.hi == 2 << 30 and dram.edge is None


def test_a_last_cache_as_fast_as_dram_gets_no_plateau() -> None:
    """An L3 that serves two cores no faster than DRAM: one run from the L2's edge to the end of the
    sweep, DRAM; the L3 is not shown, as an L1 as fast as its L2 is not."""
    pts = curve([(64 << 10, 440.0), (2 << 20, 236.0), (None, 30.0)])
    found = find_plateaus(pts, EPYC, min_points=3)
    assert [p.level for p in found] == ["L1d", "L2", DRAM]
    assert found[2].lo < 32 << 20 < found[2].hi


def test_level_groups_take_the_documented_level_of_each_point() -> None:
    pts = [(16 << 10, 440.0), (32 << 10, 300.0), (512 << 10, 236.0), (1 << 20, 230.0), (128 << 20, 20.0)]
    groups = level_groups(pts, EPYC)
    assert [(g.level, g.points) for g in groups] == [("L1d", 2), ("L2", 2), (DRAM, 1)]
    assert groups[0].gbps == pytest.approx(370.0) and groups[0].edge is None
    assert nominal_level(33 << 20, EPYC).name == DRAM


def test_bad_finder_options_raise() -> None:
    with pytest.raises(ValueError, match="tolerance"):
        find_plateaus([(4096, 1.0)], EPYC, tolerance=1.0)
    with pytest.raises(ValueError, match="min_points"):
        find_plateaus([(4096, 1.0)], EPYC, min_points=0)
    assert find_plateaus([], EPYC) == []


# ---- level ceilings from a run's measurements -------------------------------------------------------


def hierarchy_run(make_m: Callable[..., Measurement], form: str = "full") -> List[Measurement]:
    """A full sweep of read and rmw on the EPYC's levels (rmw at half the read rate), plus STREAM."""
    levels = [CacheLevel(lv.name, lv.capacity, "test") for lv in EPYC]
    ms = [
        make_m(
            "stream",
            "triad",
            "fp32",
            flops=2 << 20,
            bytes=12 << 20,
            gbps=30.0,
            ceiling_class="DRAM bandwidth",
            ceiling_kind="bandwidth",
        )
    ]
    pts = curve([(64 << 10, 440.0), (2 << 20, 236.0), (32 << 20, 197.0), (None, 20.0)])
    if form == "levels":
        pts = [(w, g) for w, g in pts if w in set(level_points(levels))]
    for ws, rate in pts:
        home = level_of(ws, levels)
        for kernel, scale in (("read", 1.0), ("rmw", 0.5)):
            ms.append(
                make_m(
                    "hierarchy",
                    kernel,
                    "u32",
                    flops=0,
                    bytes=ws * 64,
                    gbps=rate * scale,
                    params={
                        "working_set_bytes": ws,
                        "level": home.name if home else DRAM,
                        "level_bytes": home.capacity if home else 0,
                        "sweep": form,
                    },
                )
            )
    return ms


def test_the_read_kernel_makes_one_ceiling_per_cache_level(make_m: Callable[..., Measurement]) -> None:
    ms = hierarchy_run(make_m)
    ceilings = level_ceilings(ms)
    assert [c.name for c in ceilings] == ["L1d bandwidth", "L2 bandwidth", "L3 bandwidth"]
    assert [c.value for c in ceilings] == pytest.approx([440, 236, 197], rel=0.01)  # best samples: 0.4 % fast
    assert all(c.kind == "bandwidth" and c.source == "measured" and c.is_level for c in ceilings)
    l1, l2, l3 = (c.working_set for c in ceilings)
    assert l1 is not None and l2 is not None and l3 is not None
    assert l1[0] == MIN_WORKING_SET and l1[1] == l2[0] and l2[1] == l3[0]  # the ranges tile the sweep
    assert "plateau of" in ceilings[0].from_ and "hierarchy/read/u32" in ceilings[0].from_
    curves = level_curves(ms)
    assert [c.kernel for c in curves] == ["read", "rmw"] and curves[0].sweep == "full"
    assert [lv.name for lv in curves[0].levels] == ["L1d", "L2", "L3"]


def test_the_default_runs_form_gives_one_ceiling_per_level(make_m: Callable[..., Measurement]) -> None:
    ms = hierarchy_run(make_m, "levels")
    assert [c.name for c in level_ceilings(ms)] == ["L1d bandwidth", "L2 bandwidth", "L3 bandwidth"]
    assert level_curves(ms)[0].sweep == "levels"


def test_invalid_points_are_left_out(make_m: Callable[..., Measurement]) -> None:
    ms = hierarchy_run(make_m)
    ms = [
        m
        if m.suite != "hierarchy" or m.params["level"] != "L1d"
        else make_m(
            "hierarchy", m.kernel, "u32", flops=0, bytes=m.bytes, gbps=m.gbps, params=dict(m.params), valid=False
        )
        for m in ms
    ]
    assert [c.name for c in level_ceilings(ms)] == ["L2 bandwidth", "L3 bandwidth"]


def test_dram_stays_the_default_bandwidth_and_ridge(make_m: Callable[..., Measurement]) -> None:
    ms = hierarchy_run(make_m)
    from apple_roofline.roofline import derive_ceilings

    ceilings = derive_ceilings(ms) + [Ceiling("FP32 vector", "compute", 600.0, "GFLOP/s", "measured", "x")]
    model = RooflineModel(ceilings)
    assert model.bandwidth().name == "DRAM bandwidth"
    assert model.ridge_point() == pytest.approx(600.0 / 30.0)
    default = model.ridge_table().default_bandwidth
    assert default is not None and default.name == "DRAM bandwidth"
    # a roofline of level ceilings alone still has a bandwidth: the highest level's
    only = RooflineModel([c for c in ceilings if c.is_level or c.kind == "compute"])
    assert only.bandwidth().name == "L1d bandwidth"


def test_level_ceilings_survive_the_results_file(make_m: Callable[..., Measurement], m5_run: Run) -> None:
    ms = hierarchy_run(make_m)
    from apple_roofline.roofline import derive_ceilings

    run = Run(**{**m5_run.__dict__, "measurements": tuple(ms), "ceilings": tuple(derive_ceilings(ms))})
    back = Run.from_dict(json.loads(json.dumps(run.to_dict())))
    assert [c for c in back.ceilings if c.is_level] == [c for c in run.ceilings if c.is_level]
    stored = [c for c in run.to_dict()["ceilings"] if c["name"] == "L2 bandwidth"][0]
    assert stored["working_set"] == list(next(c for c in run.ceilings if c.name == "L2 bandwidth").working_set or ())


def test_a_ceiling_checks_its_working_set() -> None:
    with pytest.raises(ValueError, match="working_set"):
        Ceiling("FP32", "compute", 1.0, "GFLOP/s", "measured", "x", working_set=(1, 2))
    with pytest.raises(ValueError, match="working_set"):
        Ceiling("L2 bandwidth", "bandwidth", 1.0, "GB/s", "measured", "x", working_set=(4, 2))
    c = Ceiling("L2 bandwidth", "bandwidth", 1.0, "GB/s", "measured", "x", working_set=(4, 8))
    assert Ceiling.from_dict(c.to_dict()) == c
    assert "working_set" not in Ceiling("DRAM bandwidth", "bandwidth", 1.0, "GB/s", "measured", "x").to_dict()


# ---- the suite's plan ---------------------------------------------------------------------------------


def test_the_sweep_has_four_points_per_octave_in_whole_words() -> None:
    pts = sweep_points(64 << 10)
    assert pts[0] == MIN_WORKING_SET and pts[-1] == 64 << 10 and len(pts) == 17
    assert all(p % WORD == 0 for p in pts)
    assert all(1.1 < b / a < 1.3 for a, b in zip(pts, pts[1:]))
    assert len(sweep_points(64 << 10, 2)) == 9


def test_level_points_lie_inside_each_level_and_beyond_the_last() -> None:
    levels = [CacheLevel(lv.name, lv.capacity, "t") for lv in EPYC] + [CacheLevel("Shared memory", 1 << 30, "t")]
    pts = level_points(levels)
    w0 = dram_start(sum(lv.capacity for lv in EPYC))  # 21x the caches: 715 MiB
    assert w0 == 21 * ((64 << 10) + (2 << 20) + (32 << 20))
    assert pts == [16 << 10, 32 << 10, 512 << 10, 1 << 20, 8 << 20, 16 << 20, w0, 2 * w0]
    assert level_points(levels, quick=True) == [32 << 10, 1 << 20, 16 << 20, w0]
    assert [getattr(level_of(p, levels), "name", DRAM) for p in pts] == ["L1d"] * 2 + ["L2"] * 2 + ["L3"] * 2 + [
        DRAM
    ] * 2
    # memory too small for 2 W0: DRAM's points are the largest it allows and half of it, an octave apart
    assert level_points(levels, limit=1 << 30)[-2:] == [512 << 20, 1 << 30]
    assert level_points(levels, quick=True, limit=1 << 30)[-1] == w0  # quick: W0 alone, which fits
    assert level_points(levels, quick=True, limit=512 << 20)[-2:] == [256 << 20, 512 << 20]
    assert dram_points([], quick=True) == [256 << 20]


def test_dram_starts_where_the_caches_add_at_most_five_percent() -> None:
    """The bound behind dram_start: a pass reads each word of W once, so at most the caches' C bytes
    of it hit, and the rate is at most DRAM's x W / (W - C): 1.05 at 21 C."""
    c = 60 << 20  # an H200's L2
    w0 = dram_start(c)
    assert w0 / (w0 - c) <= 1.05 + 1e-12 and (w0 - 1) / (w0 - 1 - c) > 1.05
    assert dram_start(c, 0.10) == 11 * c and dram_start(0) == 0
    with pytest.raises(ValueError, match="inflation"):
        dram_start(c, 0.0)
    with pytest.raises(ValueError, match="cache_bytes"):
        dram_start(-1)


def test_lanes_are_planned_per_kernel() -> None:
    # an H100's wave: read runs it whole at any size, rmw n / E lanes of E words, no coarse rounding
    wave = 132 * 2048
    assert plan_lanes(256, wave, False) == (256, wave, 1)
    n, lanes, e = plan_lanes(812000, wave, False)
    assert n == 812000 and lanes == wave and e == 4
    n, lanes, e = plan_lanes(812000, wave, True)
    assert e == 4 and lanes <= wave and n == lanes * e and 812000 - n < 32
    assert plan_lanes(256, wave, True) == (256, 256, 1)
    # a CPU's two threads: whole slices of whole vector blocks
    n, lanes, e = plan_lanes(77920 // 16, 2, False)
    assert lanes == 2 and n % 32 == 0 and e == n // 2 and e % 16 == 0


def test_passes_fill_a_launch_and_stay_even_powers_of_two() -> None:
    assert passes_for(4 << 20, None, False) == 16  # 64 MiB over 4 MiB passes
    assert passes_for(4096, None, False) == 1 << 14
    assert passes_for(16, 1e6, False) == 1 << 20  # at most MAX_PASSES
    assert passes_for(1 << 20, 100.0, False) == 128  # 1 ms at 100 GB/s = 95 passes -> 128
    assert passes_for(1 << 20, 100.0, True) == 64  # its writes count too
    assert passes_for(1 << 30, 1.0, True) == 2
    assert passes_for(16, 1e6, False) == 1 << 20


def test_cache_levels_of_a_cuda_device_and_an_unknown_backend() -> None:
    levels, notes = cache_levels(
        {"backend": "cuda", "compute_capability": "9.0", "llc_bytes": 50 << 20, "shared_memory_per_sm_bytes": 228 << 10}
    )
    assert [(lv.name, lv.capacity) for lv in levels] == [
        ("L1", 256 << 10),
        ("L2", 50 << 20),
        ("Shared memory", 228 << 10),
    ]
    assert notes == []
    levels, notes = cache_levels({"backend": "cuda", "compute_capability": "5.0"})
    assert levels == [] and len(notes) == 2
    levels, notes = cache_levels(
        {"backend": "metal", "name": "Apple M1 Max", "gpu_family": "Apple7", "max_threadgroup_memory_bytes": 32 << 10}
    )
    assert [lv.name for lv in levels] == ["L1", "L2", "SLC", "Shared memory"]
    assert cache_levels({"backend": "vulkan"})[0] == []


#: A WebGPU adapter's limits as WgpuBackend.info() records them (an H200's workgroup storage).
WGPU_LIMITS = {"max-compute-workgroup-storage-size": 48 << 10}


def test_cache_levels_of_an_apple_webgpu_adapter() -> None:
    """The chip's L2 and SLC as on Metal; no L1, whose size is documented per GPU family, which
    neither WebGPU nor the chip table gives; the workgroup storage limit as shared memory."""
    levels, notes = cache_levels({"backend": "wgpu", "name": "Apple M1 Max", "limits": {**WGPU_LIMITS}})
    assert [(lv.name, lv.capacity) for lv in levels] == [
        ("L2", 512 << 10),
        ("SLC", 48 << 20),
        ("Shared memory", 48 << 10),
    ]
    assert levels[-1].source == "WebGPU limit maxComputeWorkgroupStorageSize (per workgroup)"
    assert len(notes) == 1 and "L1" in notes[0] and "GPU family" in notes[0]
    # the same facts the Metal backend names, but L1
    metal = cache_levels({"backend": "metal", "name": "Apple M1 Max", "gpu_family": "Apple7"})[0]
    assert [lv for lv in metal if lv.name != "L1"] == levels[:-1]
    _levels, notes = cache_levels({"backend": "wgpu", "name": "Apple M3 Max"})
    assert any("no documented L2 or system-level cache size for Apple M3 Max" in n for n in notes)


def _facts(cc: str, l2: int) -> DriverFacts:
    return DriverFacts(cc, f"cc of cuda:0 ({cc})", l2, f"L2 of cuda:0 ({l2})")


def test_cache_levels_of_an_nvidia_webgpu_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same GPU's compute capability and L2 from its driver (faked here), each level saying where
    its number came from; a GPU matched by vendor id or by name."""
    asked: List[str] = []

    def facts(name: str) -> DriverFacts:
        asked.append(name)
        return _facts("9.0", 60 << 20)

    monkeypatch.setattr(caches, "driver_facts", facts)
    info = {"backend": "wgpu", "name": "NVIDIA H200", "vendor_id": "0x10de", "limits": {**WGPU_LIMITS}}
    levels, notes = cache_levels(info)
    assert [(lv.name, lv.capacity) for lv in levels] == [
        ("L1", 256 << 10),
        ("L2", 60 << 20),
        ("Shared memory", 48 << 10),
    ]
    assert notes == [] and asked == ["NVIDIA H200"]
    assert "Hopper" in levels[0].source and "cc of cuda:0 (9.0)" in levels[0].source
    assert levels[1].source == f"L2 of cuda:0 ({60 << 20})"
    assert [lv.name for lv in cache_levels({"backend": "wgpu", "name": "NVIDIA B200"})[0]] == ["L1", "L2"]
    # NVML's compute capability without an L2 size; nothing known
    monkeypatch.setattr(caches, "driver_facts", lambda name: DriverFacts("9.0", "NVML", 0, "NVML reports no L2 size"))
    levels, notes = cache_levels({"backend": "wgpu", "name": "GH100", "vendor_id": "4318"})
    assert [lv.name for lv in levels] == ["L1"] and notes == ["no L2 size: NVML reports no L2 size"]
    monkeypatch.setattr(caches, "driver_facts", lambda name: DriverFacts("", "no driver", 0, "no driver"))
    levels, notes = cache_levels({"backend": "wgpu", "name": "NVIDIA H200", "limits": {**WGPU_LIMITS}})
    assert [lv.name for lv in levels] == ["Shared memory"] and len(notes) == 1 and "no driver" in notes[0]


def test_cache_levels_of_another_webgpu_adapter_and_missing_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache levels, a note naming the adapter; the driver is asked only for NVIDIA's GPUs; missing
    or malformed keys give notes, never an exception."""
    monkeypatch.setattr(caches, "driver_facts", lambda name: pytest.fail(f"asked the driver about {name}"))
    lavapipe = {
        "backend": "wgpu",
        "name": "llvmpipe (LLVM 15.0.6, 256 bits)",
        "api": "Vulkan",
        "vendor": "llvmpipe",
        "vendor_id": "0x10005",
        "adapter_type": "CPU",
        "limits": {"max-compute-workgroup-storage-size": 32 << 10},
    }
    levels, notes = cache_levels(lavapipe)
    assert [(lv.name, lv.capacity) for lv in levels] == [("Shared memory", 32 << 10)]
    assert len(notes) == 1 and "llvmpipe (LLVM 15.0.6, 256 bits)" in notes[0] and "through WebGPU" in notes[0]
    amd = cache_levels({"backend": "wgpu", "name": "AMD Radeon RX 7900 XTX", "vendor_id": "0x1002"})
    assert amd[0] == [] and "AMD Radeon RX 7900 XTX" in amd[1][0]
    for info in (
        {"backend": "wgpu"},
        {"backend": "wgpu", "name": None, "limits": None},
        {"backend": "wgpu", "limits": {}},
    ):
        levels, notes = cache_levels(info)
        assert levels == [] and len(notes) == 1
    assert hierarchy_facts({"backend": "wgpu"})["levels"] == []


def test_driver_facts_of_a_gpu_found_by_name() -> None:
    """The CUDA backend's facts of the GPUs named like the adapter where they agree, each source
    naming them; NVML's compute capability (no L2 size); a reason, never an exception."""
    h200 = {"name": "NVIDIA H200", "compute_capability": "9.0", "llc_bytes": 60 << 20}
    core = FakeCore([{"name": "NVIDIA A100", "compute_capability": "8.0", "llc_bytes": 40 << 20}, h200, h200])
    f = cuda_backend_facts("NVIDIA H200", core)
    assert (f.compute_capability, f.l2_bytes) == ("9.0", 60 << 20)
    assert f.l2_source.startswith("the CUDA driver's CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE of cuda:1, cuda:2, the 2 GPUs")
    assert "cuda:0" not in f.l2_source and core.opened == [0, 1, 2]
    f = cuda_backend_facts("NVIDIA A100", core)
    assert f.capability_source == "the CUDA driver's compute capability of cuda:0, the same GPU by name (NVIDIA A100)"
    assert "differ" in cuda_backend_facts("NVIDIA H200", FakeCore([h200, {**h200, "llc_bytes": 50 << 20}])).l2_source
    assert "none of" in cuda_backend_facts("NVIDIA H100", core).l2_source
    assert "not usable here: no libcuda" in cuda_backend_facts("NVIDIA H200", FakeCore([], "no libcuda")).l2_source
    failing = FakeCore([h200, h200], fail=frozenset({1}))
    f = cuda_backend_facts("NVIDIA H200", failing)
    assert f.l2_bytes == 60 << 20 and "cuda:1 did not open: busy" in f.l2_source
    nvml = FakeNvml([("NVIDIA H200", (9, 0)), ("NVIDIA A100", (8, 0))])
    f = nvml_facts("NVIDIA H200", nvml)
    assert (f.compute_capability, f.l2_bytes, f.l2_source) == ("9.0", 0, "NVML reports no L2 size")
    assert "nvmlDeviceGetCudaComputeCapability of NVML GPU 0" in f.capability_source and nvml.shut
    assert nvml_facts("NVIDIA H100", nvml).compute_capability == ""


def test_driver_facts_are_asked_once_and_fall_back_to_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once per process and name (the suite and the run's device facts both ask); NVML's compute
    capability where the CUDA backend knows nothing, the L2 note saying why there is none."""
    asked: List[str] = []

    def cuda(name: str) -> DriverFacts:
        asked.append(name)
        return DriverFacts("", "no CUDA", 0, "the CUDA backend is not usable here: no libcuda")

    monkeypatch.setattr(nvidia_by_name, "cuda_backend_facts", cuda)
    monkeypatch.setattr(
        nvidia_by_name, "nvml_facts", lambda name: DriverFacts("8.6", "NVML's", 0, "NVML reports no L2 size")
    )
    nvidia_by_name.driver_facts.cache_clear()
    try:
        f = nvidia_by_name.driver_facts("NVIDIA RTX A6000")
        assert nvidia_by_name.driver_facts("NVIDIA RTX A6000") is f and asked == ["NVIDIA RTX A6000"]
        assert (f.compute_capability, f.l2_bytes) == ("8.6", 0)
        assert f.l2_source == "NVML reports no L2 size, and the CUDA backend is not usable here: no libcuda"
        monkeypatch.setattr(nvidia_by_name, "nvml_facts", lambda name: DriverFacts("", "no NVML", 0, "no NVML"))
        assert nvidia_by_name.driver_facts("NVIDIA L4").capability_source == "no CUDA; no NVML"
    finally:
        nvidia_by_name.driver_facts.cache_clear()


class FakeCore:
    """``_core`` as far as :func:`cuda_backend_facts` uses it: a CUDA backend with these GPUs' infos
    (none: not usable, for ``reason``); the GPUs of index in ``fail`` do not open."""

    BackendError = RuntimeError

    def __init__(self, infos: List[Dict[str, Any]], reason: str = "", fail: FrozenSet[int] = frozenset()) -> None:
        self.infos, self.reason, self.fail = infos, reason, fail
        self.opened: List[int] = []
        self._index = 0

    def backends(self) -> List[Dict[str, Any]]:
        return [{"name": "cuda", "compiled": True, "devices": len(self.infos), "reason": self.reason}]

    def Backend(self, name: str, index: int) -> "FakeCore":  # noqa: N802 - _core's name
        assert name == "cuda"
        self.opened.append(index)
        if index in self.fail:
            raise self.BackendError("busy")
        self._index = index
        return self

    def info(self) -> Dict[str, Any]:
        return dict(self.infos[self._index])


class FakeNvml:
    """``pynvml`` as far as :func:`nvml_facts` uses it: GPUs of (name, compute capability)."""

    def __init__(self, gpus: List[Tuple[str, Tuple[int, int]]]) -> None:
        self.gpus, self.shut = gpus, False

    def nvmlInit(self) -> None:  # noqa: N802 - NVML's names
        self.shut = False

    def nvmlShutdown(self) -> None:  # noqa: N802
        self.shut = True

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:  # noqa: N802
        return i

    def nvmlDeviceGetName(self, h: int) -> bytes:  # noqa: N802
        return self.gpus[h][0].encode()

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> Tuple[int, int]:  # noqa: N802
        return self.gpus[h][1]


def test_an_apple_cpu_lists_the_system_level_cache() -> None:
    """The SLC sits in front of the whole chip's memory, so DRAM's working sets of a CPU on Apple
    silicon start beyond it too; sysctl does not report it, the chip table does."""
    slc = slc_level("Apple M1 Max")
    assert slc is not None and slc.name == "SLC" and slc.capacity == 48 << 20
    assert slc_level("Intel(R) Xeon(R) Platinum 8480+") is None


# ---- the references against the kernels, word by word ----------------------------------------------


def emulate(
    words: np.ndarray, n: int, lanes: int, passes: int, rotate: bool, interleaved: bool, rmw: bool
) -> np.ndarray:
    """shaders/cuda/hierarchy.cu (interleaved lanes) or native/cpu/hierarchy.cpp (contiguous) in
    Python: the sum over lanes of their outputs (uint32[4]); with rmw, ``words`` is updated."""
    acc = np.zeros(4, np.uint64)
    e = -(-n // lanes)
    step = (n * 40503 >> 16) % n if rotate else 0
    for t in range(lanes):
        base = t % n if interleaved else (t * e) % n
        for r in range(passes):
            for k in range(e):
                i = (base + k * lanes) % n if interleaved else (base + k) % n
                acc += words[i].astype(np.uint64)
                if rmw:
                    words[i] ^= np.uint32(MASK)
            base = (base + step) % n
    total: np.ndarray = (acc & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return total


@pytest.mark.parametrize(
    "n,lanes,passes,rotate",
    [
        (48, 8, 3, True),
        (10, 16, 4, True),
        (7, 21, 5, True),
        (48, 8, 2, False),
        (64, 64, 3, True),
        (50, 8, 3, True),
        (50, 8, 2, False),
    ],
)
def test_read_total_matches_the_kernels(n: int, lanes: int, passes: int, rotate: bool) -> None:
    rng = np.random.default_rng(n)
    pat = rng.integers(0, 1 << 32, 37, dtype=np.uint64).astype(np.uint32)  # a period that is not a multiple of 4
    words = np.resize(pat, 4 * n).reshape(n, 4)
    want = read_total(word_sums(pat), n, lanes, passes, rotate)
    assert np.array_equal(emulate(words.copy(), n, lanes, passes, rotate, True, False), want)
    if not rotate:  # the CPU's contiguous lanes read the same words, also where n is no multiple of the lanes
        assert np.array_equal(emulate(words.copy(), n, lanes, passes, False, False, False), want)


@pytest.mark.parametrize("interleaved", [True, False])
def test_rmw_total_matches_the_kernels_and_restores_the_buffer(interleaved: bool) -> None:
    pat = np.random.default_rng(3).integers(0, 1 << 32, 41, dtype=np.uint64).astype(np.uint32)
    n, lanes, passes = 40, 8, 4
    words = np.resize(pat, 4 * n).reshape(n, 4)
    work = words.copy()
    got = emulate(work, n, lanes, passes, False, interleaved, True)
    assert np.array_equal(got, rmw_total(word_sums(pat), word_sums(pat, MASK), n, passes))
    assert np.array_equal(work, words)
    # a kernel that never stored would read the input on every pass: a different total
    assert not np.array_equal(emulate(words.copy(), n, lanes, passes, False, interleaved, False), got)


def test_the_full_sweep_measures_both_of_drams_points_even_quick() -> None:
    """A plateau of the full sweep needs two points: with W0 alone an H200's quick sweep found no
    DRAM level (tree 3fb74b1), so the full form plans W0 and 2 W0 with --quick too."""
    from apple_roofline.suites import SuiteContext
    from apple_roofline.suites.hierarchy.suite import SWEEP_OPTION, HierarchySuite

    info = {
        "backend": "cuda",
        "llc_bytes": 60 << 20,
        "memory_bytes": 140 << 30,
        "compute_units": 132,
        "shared_memory_per_sm_bytes": 228 << 10,
        "cc_major": 9,
        "cc_minor": 0,
    }
    caches = [lv for lv in cache_levels(info)[0] if lv.name != "Shared memory"]
    w0 = dram_start(sum(lv.capacity for lv in caches))
    for quick in (True, False):
        suite = HierarchySuite(SuiteContext(None, "cuda", info, quick, 0, {SWEEP_OPTION: "full"}))
        assert suite.points[-2:] == [w0, 2 * w0], quick
