"""Unit tests for apple_roofline.theoretical.apple: theoretical Apple-silicon GPU ceilings from fake info dicts."""

from __future__ import annotations

import json
from typing import Dict, List, Optional

import pytest

from apple_roofline import theoretical
from apple_roofline.study.records import Ceiling
from apple_roofline.theoretical.apple import (
    APPLE_CHIPS,
    COMPUTE_CLASSES,
    FP32_ALUS_PER_CORE,
    GEMM_CLASSES,
    AppleChip,
    apple_theoretical,
    lookup_chip,
)


def _info(name: Optional[str], cores: Optional[int], chip: Optional[str] = None) -> Dict[str, object]:
    info: Dict[str, object] = {
        "backend": "metal",
        "gpu_family": "Apple8",
        "memory_bytes": 64 << 30,
        "unified_memory": True,
    }
    if name is not None:
        info["name"] = name
    if chip is not None:
        info["chip"] = chip
    if cores is not None:
        info["gpu_cores"] = cores
        info["compute_units"] = cores
    return info


def _by_name(ceilings: List[Ceiling]) -> Dict[str, Ceiling]:
    out = {c.name: c for c in ceilings}
    assert len(out) == len(ceilings), "duplicate ceiling names"
    return out


def _desc(info: Dict[str, object]) -> Dict[str, object]:
    d, _ = apple_theoretical(info)
    t = d["theoretical"]
    assert isinstance(t, dict)
    return t


def _omitted(info: Dict[str, object]) -> Dict[str, str]:
    o = _desc(info)["omitted"]
    assert isinstance(o, dict)
    return o


# ------------------------------------------------------------------ the articles' figures


def test_m1_max_32_core_against_the_articles_figures() -> None:
    """Y. Wang, 'Roofline Analysis of Apple Silicon GPUs using MLX': M1 Max 10.4 TFLOPS and 400 GB/s.

    The clock-derived peak uses the T600x GPU's top DVFS state (1296 MHz): 32 x 128 x 2 x 1296 MHz
    = 10617 GFLOP/s, 2.1 % above Apple's 10.4 TFLOPS. Apple's figure is 32 x 256 x 1.278 GHz (the
    base M1's clock) rounded down, so the 1 % agreement the M1 and M2 Ultra show is not reached.
    """
    _, ceilings = apple_theoretical(_info("Apple M1 Max", 32))
    c = _by_name(ceilings)
    assert c["FP32 scalar ILP"].value == pytest.approx(32 * 128 * 2 * 1296e6 / 1e9)
    assert c["FP32 scalar ILP"].value == pytest.approx(10616.832)
    rel = c["FP32 scalar ILP"].value / 10400.0 - 1.0
    assert 0.015 < rel < 0.025
    # Apple's figure is the 1278 MHz product rounded down to one decimal of a TFLOPS
    assert int(32 * 256 * 1.278e9 / 1e11) / 10 == 10.4
    assert c["DRAM bandwidth"].value == 400.0
    assert c["DRAM bandwidth"].unit == "GB/s"
    assert "409.6" in c["DRAM bandwidth"].from_  # the bus math is in the derivation
    stated = _desc(_info("Apple M1 Max", 32))["stated"]
    assert isinstance(stated, dict)
    assert stated["fp32_tflops"] == 10.4
    assert "'Roofline Analysis of Apple Silicon GPUs using MLX'" in str(stated["source"])


def test_m2_ultra_76_core_matches_27_2_tflops_and_800_gbps() -> None:
    """Y. Wang, 'Roofline Analysis of Apple Silicon GPUs using MLX': M2 Ultra 27.2 TFLOPS (27.199) and 800 GB/s;
    within 1 %."""
    _, ceilings = apple_theoretical(_info("Apple M2 Ultra", 76))
    c = _by_name(ceilings)
    fp32 = c["FP32 vector"].value
    assert fp32 == pytest.approx(76 * 128 * 2 * 1398e6 / 1e9)
    assert fp32 == pytest.approx(27200.0, rel=0.01)
    assert fp32 == pytest.approx(27199.0, rel=1e-3)  # the article's 27.199
    assert c["DRAM bandwidth"].value == 800.0
    assert "819.2" in c["DRAM bandwidth"].from_


def test_m1_8_core_matches_2_6_tflops() -> None:
    c = _by_name(apple_theoretical(_info("Apple M1", 8))[1])
    assert c["FP32 vector"].value == pytest.approx(8 * 128 * 2 * 1278e6 / 1e9)
    assert c["FP32 vector"].value == pytest.approx(2600.0, rel=0.01)


def test_m5_10_cores_at_1578_mhz() -> None:
    """'Apple M5 GPU Roofline Analysis': 10 cores x 128 ALUs x 2 x 1578 MHz = 4040 GFLOP/s (its P-state table)."""
    d, ceilings = apple_theoretical(_info("Apple M5", 10))
    c = _by_name(ceilings)
    assert c["FP32 scalar ILP"].value == pytest.approx(10 * 128 * 2 * 1578e6 / 1e9)
    assert c["FP32 scalar ILP"].value == pytest.approx(4039.68)
    assert "1578 MHz" in c["FP32 scalar ILP"].from_
    assert "'Apple M5 GPU Roofline Analysis', section 'Measured FP32 Peak: 3,760 GFLOPS'" in c["FP32 scalar ILP"].from_
    # FP16 at 2x (the article measured 6004 GFLOP/s, above a 1x bound): 8080 GFLOP/s
    assert c["FP16 vector"].value == pytest.approx(8079.36)
    assert c["FP16 vector"].value > 6004.0
    # Apple states 153 GB/s; the LPDDR5X-9600 bus math (153.6) is in the derivation
    assert c["DRAM bandwidth"].value == 153.0
    assert "153.6" in c["DRAM bandwidth"].from_
    # Neural Accelerators: no GEMM FP16 bound; no FP64 on Apple GPUs
    t = d["theoretical"]
    assert isinstance(t, dict)
    assert "GEMM FP16" in t["omitted"] and "FP64" in t["omitted"]
    assert "GEMM FP16" not in c and "FP64" not in c


def test_every_ceiling_is_theoretical_with_units_and_names_that_pair_with_measured_classes() -> None:
    _, ceilings = apple_theoretical(_info("Apple M2 Max", 38))
    c = _by_name(ceilings)
    assert set(c) == {
        "DRAM bandwidth",
        "FP32 vector",
        "FP32 scalar ILP",
        "FP16 vector",
        "FP16 scalar ILP",
        "GEMM FP32",
        "GEMM FP16",
    }
    assert set(c) - {"DRAM bandwidth"} <= set(COMPUTE_CLASSES + GEMM_CLASSES)
    for ceiling in ceilings:
        assert ceiling.source == "theoretical"
        assert ceiling.unit == ("GB/s" if ceiling.kind == "bandwidth" else "GFLOP/s")
        assert ceiling.from_
    # M2: FP16 at the FP32 rate (metal-benchmarks), GEMM = ALU peaks
    assert c["FP16 vector"].value == c["FP32 vector"].value == c["GEMM FP32"].value == c["GEMM FP16"].value
    assert c["FP32 vector"].value == pytest.approx(38 * 256 * 1.398)
    assert "metal-benchmarks" in c["FP16 vector"].from_


def test_description_is_json_and_names_its_sources() -> None:
    d, _ = apple_theoretical(_info("Apple M2 Max", 38))
    text = json.dumps(d)
    t = d["theoretical"]
    assert isinstance(t, dict)
    assert t["chip"] == "Apple M2 Max"
    assert t["gpu_cores"] == 38
    assert t["known_configurations"] == [30, 38]
    figures = t["figures"]
    assert isinstance(figures, dict)
    for key in ("gpu_clock_mhz", "fp32_alus_per_core", "bandwidth_gbps", "fp16_per_fp32_rate"):
        assert figures[key]["source"], key
    assert figures["gpu_clock_mhz"]["value"] == 1398.0
    assert "t602x-common.dtsi" in figures["gpu_clock_mhz"]["source"]
    assert (
        "T. Zakharko, 'Investigating the GPU Neural Accelerators on Apple A19/M5', section 'A note on terminology'"
    ) in figures["fp32_alus_per_core"]["source"]
    assert "'Apple Silicon GPU Optimization Guide'" in text
    assert "shared/reference" not in text  # sources cite the articles, not local copies


# ------------------------------------------------------------------ bandwidth per configuration


@pytest.mark.parametrize(
    "name, cores, gbps",
    [
        ("Apple M3 Max", 30, 300.0),
        ("Apple M3 Max", 40, 400.0),
        ("Apple M4 Max", 32, 410.0),
        ("Apple M4 Max", 40, 546.0),
        ("Apple M4 Pro", 20, 273.0),
        ("Apple M3 Pro", 14, 150.0),
        ("Apple M3 Pro", 18, 150.0),
        ("Apple M5 Max", 40, 614.0),
        ("Apple M5 Pro", 20, 307.0),
        ("Apple M1 Pro", 14, 200.0),
        ("Apple M3 Ultra", 80, 819.0),
        ("Apple M4", 8, 120.0),
    ],
)
def test_bandwidth_per_configuration(name: str, cores: int, gbps: float) -> None:
    c = _by_name(apple_theoretical(_info(name, cores))[1])
    assert c["DRAM bandwidth"].value == gbps


def test_m3_max_30_and_40_core_differ() -> None:
    b30 = _by_name(apple_theoretical(_info("Apple M3 Max", 30))[1])["DRAM bandwidth"].value
    b40 = _by_name(apple_theoretical(_info("Apple M3 Max", 40))[1])["DRAM bandwidth"].value
    assert (b30, b40) == (300.0, 400.0)


def test_configuration_dependent_bandwidth_without_a_known_configuration_is_left_out() -> None:
    for info in (_info("Apple M3 Max", 36), _info("Apple M3 Max", None)):
        _, ceilings = apple_theoretical(info)
        assert "DRAM bandwidth" not in _by_name(ceilings)
        assert "depends on the GPU configuration" in _omitted(info)["DRAM bandwidth"]


def test_chips_without_a_sourced_clock_give_bandwidth_only() -> None:
    info = _info("Apple M3 Max", 40)
    c = _by_name(apple_theoretical(info)[1])
    assert set(c) == {"DRAM bandwidth"}
    om = _omitted(info)
    for cname in ("FP32 vector", "FP32 scalar ILP", "FP16 vector", "GEMM FP32"):
        assert "no primary source" in om[cname]


def test_m4_pro_has_fp32_but_no_fp16_ceiling() -> None:
    info = _info("Apple M4 Pro", 20)
    c = _by_name(apple_theoretical(info)[1])
    assert c["FP32 vector"].value == pytest.approx(20 * 256 * 1.578)
    assert "FP16 vector" not in c and "GEMM FP16" not in c
    assert "family 9" in _omitted(info)["FP16 vector"]


# ------------------------------------------------------------------ matching


@pytest.mark.parametrize(
    "name",
    [
        "Apple M2 Max",
        "apple m2 max",
        "APPLE M2 MAX",
        "  Apple   M2\tMax  ",
        "M2 Max",
        "m2  max",
    ],
)
def test_name_matching_variants(name: str) -> None:
    chip = lookup_chip(name)
    assert chip is not None and chip.name == "Apple M2 Max"
    assert _desc(_info(name, 38))["chip"] == "Apple M2 Max"


def test_lookup_does_not_confuse_tiers() -> None:
    for name in ("Apple M1", "Apple M1 Pro", "Apple M1 Max", "Apple M1 Ultra", "Apple M5"):
        chip = lookup_chip(name)
        assert chip is not None and chip.name == name
    assert lookup_chip("Apple M2 Maxx") is None
    assert lookup_chip("Apple M") is None
    assert lookup_chip(None) is None
    assert lookup_chip(42) is None


def test_chip_is_used_when_name_is_missing_or_unknown() -> None:
    for info in (_info(None, 10, chip="Apple M5"), _info("Apple Paravirtual device", 10, chip="Apple M5")):
        t = _desc(info)
        assert t["chip"] == "Apple M5"
        assert t["matched_from"] == "chip"
    assert _desc(_info("Apple M5", 10, chip="Apple M4"))["matched_from"] == "name"


def test_core_count_not_a_known_configuration_is_used_and_said() -> None:
    info = _info("Apple M1 Max", 28)
    c = _by_name(apple_theoretical(info)[1])
    assert c["FP32 vector"].value == pytest.approx(28 * 256 * 1.296)
    assert c["DRAM bandwidth"].value == 400.0  # the M1 Max's bandwidth is the same for every configuration
    t = _desc(info)
    assert "not a configuration in the table" in str(t["configuration"])
    assert t["gpu_cores"] == 28


def test_compute_units_is_used_when_gpu_cores_is_missing() -> None:
    info = _info("Apple M5", None)
    info["compute_units"] = 10
    assert _by_name(apple_theoretical(info)[1])["FP32 vector"].value == pytest.approx(4039.68)


# ------------------------------------------------------------------ unknown chips and malformed keys


@pytest.mark.parametrize(
    "info",
    [
        {"backend": "metal", "name": "Apple A17 Pro GPU", "gpu_cores": 6},
        {"backend": "metal", "name": "AMD Radeon Pro 5500M"},
        {"backend": "metal"},
        {},
        {"name": None, "chip": None},
        {"name": 3.5, "chip": ["Apple M2"], "gpu_cores": "ten"},
    ],
)
def test_unknown_chip_or_missing_keys_give_no_ceilings(info: Dict[str, object]) -> None:
    d, ceilings = apple_theoretical(info)
    assert ceilings == []
    t = d["theoretical"]
    assert isinstance(t, dict)
    assert set(t) == {"chip", "note"}
    assert "not in the chip table" in str(t["note"])
    json.dumps(d)


def test_unknown_chip_reports_its_name() -> None:
    d, _ = apple_theoretical({"name": "Apple M9 Giga"})
    assert d["theoretical"]["chip"] == "Apple M9 Giga"  # type: ignore[index]


@pytest.mark.parametrize("cores", [None, 0, -8, True, 7.5, "38", float("nan"), float("inf")])
def test_malformed_core_count_gives_no_compute_ceiling_and_does_not_raise(cores: object) -> None:
    info: Dict[str, object] = {"backend": "metal", "name": "Apple M2 Max", "gpu_cores": cores, "compute_units": cores}
    d, ceilings = apple_theoretical(info)
    c = _by_name(ceilings)
    assert set(c) == {"DRAM bandwidth"}  # the M2 Max's 400 GB/s holds for every configuration
    assert "GPU core count unknown" in _omitted(info)["FP32 vector"]
    json.dumps(d)


# ------------------------------------------------------------------ the table


def test_table_covers_m1_to_m5() -> None:
    expected = {
        "Apple M1",
        "Apple M1 Pro",
        "Apple M1 Max",
        "Apple M1 Ultra",
        "Apple M2",
        "Apple M2 Pro",
        "Apple M2 Max",
        "Apple M2 Ultra",
        "Apple M3",
        "Apple M3 Pro",
        "Apple M3 Max",
        "Apple M3 Ultra",
        "Apple M4",
        "Apple M4 Pro",
        "Apple M4 Max",
        "Apple M5",
        "Apple M5 Pro",
        "Apple M5 Max",
    }
    assert set(APPLE_CHIPS) == expected
    assert APPLE_CHIPS["Apple M1 Max"].core_counts == (24, 32)
    assert APPLE_CHIPS["Apple M2 Ultra"].core_counts == (60, 76)


@pytest.mark.parametrize("chip", list(APPLE_CHIPS.values()), ids=list(APPLE_CHIPS))
def test_every_figure_has_a_source(chip: AppleChip) -> None:
    assert chip.name == APPLE_CHIPS[chip.name].name
    assert chip.configs and chip.cores_source
    assert list(chip.core_counts) == sorted(set(chip.core_counts))
    assert chip.alus_per_core == FP32_ALUS_PER_CORE == 128 and chip.alus_source
    # a figure has a source; a missing figure has the reason it is missing
    assert chip.clock_source
    assert chip.fp16_source
    if chip.clock_mhz is not None:
        assert chip.clock_mhz > 0 and not chip.clock_source.startswith("no primary source")
    if chip.fp16_ratio is not None:
        assert chip.fp16_ratio in (1.0, 2.0) and not chip.fp16_source.startswith("unknown")
    else:
        assert chip.fp16_source.startswith("unknown")
    if chip.bandwidth_gbps is not None:
        assert chip.bandwidth_gbps > 0 and chip.bandwidth_source
    for cfg in chip.configs:
        if cfg.bandwidth_gbps is not None:
            assert cfg.bandwidth_gbps > 0 and cfg.bandwidth_source
        if cfg.stated_fp32_tflops is not None:
            assert cfg.stated_fp32_source
        # every configuration has a bandwidth, from the chip or its own
        bw, src = chip.bandwidth(cfg.cores)
        assert bw is not None and src


@pytest.mark.parametrize(
    "chip",
    [c for c in APPLE_CHIPS.values() if c.clock_mhz is not None],
    ids=[k for k, c in APPLE_CHIPS.items() if c.clock_mhz is not None],
)
def test_stated_tflops_agree_with_the_clock(chip: AppleChip) -> None:
    """Every cited TFLOPS figure is within 1 % of cores x 128 x 2 x clock, except the M1 Max's
    (Apple's 10.4 is 2.1 % below the 1296 MHz product; see the module docstring)."""
    for cfg in chip.configs:
        if cfg.stated_fp32_tflops is None:
            continue
        derived = chip.fp32_gflops(cfg.cores)
        assert derived is not None
        tol = 0.025 if chip.name == "Apple M1 Max" else 0.01
        assert derived / 1e3 == pytest.approx(cfg.stated_fp32_tflops, rel=tol)


# ------------------------------------------------------------------ dispatch


def test_device_theoretical_dispatches_metal() -> None:
    info = _info("Apple M2 Ultra", 76)
    assert theoretical.device_theoretical(info) == apple_theoretical(info)
    d, ceilings = theoretical.device_theoretical({"backend": "metal", "name": "Apple M5", "gpu_cores": 10})
    assert "FP32 vector" in _by_name(ceilings)
    d, ceilings = theoretical.device_theoretical({"backend": "metal", "name": "Unknown GPU"})
    assert ceilings == [] and "note" in d["theoretical"]  # type: ignore[operator]
