"""Unit tests for apple_roofline.theoretical.cuda: theoretical NVIDIA GPU ceilings from fake device-info dicts."""

from __future__ import annotations

import json
import math
from typing import Dict, List, Optional, Tuple

import pytest

from apple_roofline import theoretical
from apple_roofline.study.records import Ceiling
from apple_roofline.theoretical.cuda import (
    COMPUTE_CLASSES,
    CUDA_CORE_RATES,
    GEMM_CLASSES,
    TENSOR_CORE_RATES,
    cuda_theoretical,
)

ALL_COMPUTE = COMPUTE_CLASSES + GEMM_CLASSES


def _info(name: str, sms: int, mhz: float, bus: int, mem_mhz: float, major: int, minor: int) -> Dict[str, object]:
    return {
        "backend": "cuda",
        "name": name,
        "index": 0,
        "compute_units": sms,
        "memory_bytes": 80 << 30,
        "clock_hz": int(mhz * 1e6),
        "memory_clock_hz": int(mem_mhz * 1e6),
        "memory_bus_bits": bus,
        "llc_bytes": 50 << 20,
        "cc_major": major,
        "cc_minor": minor,
        "compute_capability": f"{major}.{minor}",
        "driver_version": "13.0",
        "nvrtc_version": "13.0",
        "cublas_version": "13.0.0",
    }


H200 = _info("NVIDIA H200", 132, 1980, 6016, 3201, 9, 0)
H100_SXM = _info("NVIDIA H100 80GB HBM3", 132, 1980, 5120, 2619, 9, 0)
A100 = _info("NVIDIA A100-SXM4-40GB", 108, 1410, 5120, 1215, 8, 0)
RTX_4090 = _info("NVIDIA GeForce RTX 4090", 128, 2520, 384, 10501, 8, 9)
L4 = _info("NVIDIA L4", 58, 2040, 192, 6251, 8, 9)
V100 = _info("Tesla V100-SXM2-16GB", 80, 1530, 4096, 877, 7, 0)
T4 = _info("Tesla T4", 40, 1590, 256, 5001, 7, 5)
RTX_5090 = _info("NVIDIA GeForce RTX 5090", 170, 2407, 512, 14001, 12, 0)


def _by_name(ceilings: List[Ceiling]) -> Dict[str, Ceiling]:
    out = {c.name: c for c in ceilings}
    assert len(out) == len(ceilings), "duplicate ceiling names"
    return out


def _gf(info: Dict[str, object], name: str) -> float:
    return _by_name(cuda_theoretical(info)[1])[name].value


def _close(value: float, expected: float, rel: float = 1e-3) -> bool:
    return math.isclose(value, expected, rel_tol=rel)


# ------------------------------------------------------------------ the issue's own figures


def test_h200_bandwidth_and_fp32_match_the_issue() -> None:
    desc, ceilings = cuda_theoretical(H200)
    c = _by_name(ceilings)
    assert _close(c["DRAM bandwidth"].value, 4814.0)  # 2 x 3201 MHz x 6016 bit / 8
    assert _close(c["FP32 vector"].value, 66.9e3)  # 132 x 128 x 2 x 1.98 GHz
    assert c["FP32 scalar ILP"].value == c["FP32 vector"].value
    assert c["DRAM bandwidth"].kind == "bandwidth" and c["DRAM bandwidth"].unit == "GB/s"
    assert all(x.source == "theoretical" for x in ceilings)
    assert all(x.unit == "GFLOP/s" for x in ceilings if x.kind == "compute")
    # the derivation is written out with the numbers
    assert "6016-bit" in c["DRAM bandwidth"].from_ and "3201 MHz" in c["DRAM bandwidth"].from_
    assert "132 SMs x 128 FP32" in c["FP32 vector"].from_ and "1980 MHz" in c["FP32 vector"].from_
    theo = desc["theoretical"]
    assert isinstance(theo, dict)
    assert theo["sm_count"] == 132 and theo["clock_hz"] == 1_980_000_000 and theo["memory_bus_bits"] == 6016
    assert theo["compute_capability"] == "9.0"


def test_h200_has_every_class() -> None:
    desc, ceilings = cuda_theoretical(H200)
    names = {c.name for c in ceilings}
    assert names == {"DRAM bandwidth", *ALL_COMPUTE}
    theo = desc["theoretical"]
    assert isinstance(theo, dict)
    assert theo["omitted"] == {}


def test_description_is_json_friendly_and_matches_ceilings() -> None:
    desc, ceilings = cuda_theoretical(H200)
    back = json.loads(json.dumps(desc))
    peaks = back["theoretical"]["peaks"]
    for c in ceilings:
        key = "gbps" if c.kind == "bandwidth" else "gflops"
        assert peaks[c.name][key] == pytest.approx(c.value)
        assert peaks[c.name]["derivation"] == c.from_
    # ceilings survive the results JSON round trip
    for c in ceilings:
        assert Ceiling.from_dict(json.loads(json.dumps(c.to_dict()))) == c


# ------------------------------------------------------------------ H100 SXM: the whitepaper's figures


def test_h100_sxm() -> None:
    c = _by_name(cuda_theoretical(H100_SXM)[1])
    assert _close(c["DRAM bandwidth"].value, 3352.3)  # 2 x 2619 MHz x 5120 / 8; published 3.35 TB/s
    assert _close(c["FP32 vector"].value, 66.9e3)
    assert _close(c["FP64"].value, 33.5e3, 2e-3)  # whitepaper 33.5 TFLOPS
    assert _close(c["FP16 vector"].value, 133.8e3)  # whitepaper non-tensor FP16 133.8
    assert _close(c["GEMM FP64"].value, 66.9e3)  # FP64 tensor 66.9 at 1980 MHz
    # tensor-core figures at the driver's 1980 MHz; NVIDIA's 989.4 / 494.7 / 1978.9 use 1830 MHz
    scale = 1830 / 1980
    assert _close(c["GEMM FP16"].value * scale, 989.4e3)
    assert _close(c["GEMM BF16"].value * scale, 989.4e3)
    assert _close(c["GEMM TF32"].value * scale, 494.7e3)
    assert _close(c["GEMM INT8"].value * scale, 1978.9e3)
    assert _close(c["GEMM FP8"].value * scale, 1978.9e3)  # FP8 dense = 2x FP16 dense
    assert "E4M3 or E5M2 inputs" in c["GEMM FP8"].from_
    assert c["GEMM FP32"].value == c["FP32 vector"].value
    assert "dense, at the maximum SM clock reported by the driver (clock_hz)" in c["GEMM FP16"].from_
    assert "lower boost clock" in c["GEMM FP16"].from_
    assert "GOP/s, reported as GFLOP/s" in c["GEMM INT8"].from_
    assert "2 per multiply-add" in c["GEMM INT8"].from_


# ------------------------------------------------------------------ A100


def test_a100() -> None:
    c = _by_name(cuda_theoretical(A100)[1])
    assert _close(c["DRAM bandwidth"].value, 1555.2)  # published 1555 GB/s
    assert _close(c["FP32 vector"].value, 19.5e3, 2e-3)
    assert _close(c["FP64"].value, 9.7e3, 6e-3)  # 9.746 vs the published, rounded 9.7
    assert _close(c["FP16 vector"].value, 78.0e3)
    assert _close(c["GEMM FP64"].value, 19.5e3, 2e-3)
    assert _close(c["GEMM TF32"].value, 156e3)
    assert _close(c["GEMM FP16"].value, 312e3)
    assert _close(c["GEMM BF16"].value, 312e3)
    assert _close(c["GEMM INT8"].value, 624e3)
    assert c["GEMM FP16"].value == 108 * 2048 * 1.41e9 / 1e9
    omitted = cuda_theoretical(A100)[0]["theoretical"]["omitted"]  # type: ignore[index]
    assert "GEMM FP8" not in c and omitted["GEMM FP8"] == (
        "tensor cores of cc 8.0 have no FP8 mode (introduced with Ada, cc 8.9, and Hopper, cc 9.0)"
    )


# ------------------------------------------------------------------ RTX 4090 (cc 8.9, GeForce)


def test_rtx_4090_fp64_is_one_sixty_fourth() -> None:
    desc, ceilings = cuda_theoretical(RTX_4090)
    c = _by_name(ceilings)
    assert c["FP64"].value == pytest.approx(c["FP32 vector"].value / 64)
    assert _close(c["FP32 vector"].value, 82.6e3)
    assert _close(c["FP64"].value, 1.29e3, 2e-3)
    assert _close(c["DRAM bandwidth"].value, 1008.0)
    # cc 8.9 FP16 (half2) runs at the FP32 rate
    assert c["FP16 vector"].value == c["FP32 vector"].value
    # GeForce: FP16/BF16 with FP32 accumulation and TF32 at half the professional rate
    assert _close(c["GEMM FP16"].value, 165.2e3)
    assert _close(c["GEMM BF16"].value, 165.2e3)
    assert _close(c["GEMM TF32"].value, 82.6e3)
    assert _close(c["GEMM INT8"].value, 660.6e3)
    assert "GeForce rate" in c["GEMM FP16"].from_
    theo = desc["theoretical"]
    assert isinstance(theo, dict)
    assert theo["product_line"] == "GeForce"
    assert "GEMM FP64" not in c and "GEMM FP64" in theo["omitted"]


def test_professional_cc_8_9_runs_fp32_accumulation_at_full_rate() -> None:
    c = _by_name(cuda_theoretical(L4)[1])
    assert _close(c["GEMM FP16"].value, 121e3, 3e-3)  # L4 data sheet: 121 TFLOPS dense
    assert _close(c["GEMM TF32"].value, 60e3, 1.2e-2)  # 60 TFLOPS dense (rounded)
    assert "professional/data-center rate" in c["GEMM FP16"].from_


def test_unknown_name_omits_only_the_rates_that_depend_on_the_product_line() -> None:
    info = dict(RTX_4090)
    del info["name"]
    desc, ceilings = cuda_theoretical(info)
    c = _by_name(ceilings)
    omitted = desc["theoretical"]["omitted"]  # type: ignore[index]
    for k in ("GEMM FP16", "GEMM BF16", "GEMM TF32"):
        assert k not in c and "device name is unknown" in omitted[k]
    assert "GEMM INT8" in c  # same on every product line
    assert "FP32 vector" in c


# ------------------------------------------------------------------ other compute capabilities


def test_volta_and_turing() -> None:
    v = _by_name(cuda_theoretical(V100)[1])
    assert _close(v["FP32 vector"].value, 15.7e3, 3e-3)  # published 15.7 (15.67)
    assert _close(v["FP64"].value, 7.8e3, 5e-3)
    assert _close(v["GEMM FP16"].value, 125e3, 3e-3)
    assert v["GEMM FP64"].value == v["FP64"].value  # no FP64 tensor cores: DGEMM on the FP64 units
    assert "no FP64 mode" in v["GEMM FP64"].from_
    assert not {"GEMM BF16", "GEMM TF32", "GEMM INT8"} & set(v)
    t = _by_name(cuda_theoretical(T4)[1])
    assert t["FP64"].value == pytest.approx(t["FP32 vector"].value / 32)  # 2 vs 64 per SM
    assert _close(t["GEMM FP16"].value, 65e3, 2e-3)
    assert _close(t["GEMM INT8"].value, 130e3, 2e-3)


def test_rtx_5090_cc_12_0() -> None:
    c = _by_name(cuda_theoretical(RTX_5090)[1])
    assert _close(c["FP32 vector"].value, 104.8e3)
    assert c["FP64"].value == pytest.approx(c["FP32 vector"].value / 64)
    assert c["FP16 vector"].value == c["FP32 vector"].value
    assert _close(c["GEMM FP16"].value, 209.5e3)
    assert _close(c["GEMM INT8"].value, 838e3)
    assert _close(c["DRAM bandwidth"].value, 1792.1)  # published 1792 GB/s
    pro = dict(RTX_5090, name="NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
    desc, ceilings = cuda_theoretical(pro)
    names = {x.name for x in ceilings}
    assert "GEMM FP16" not in names and "FP32 vector" in names
    assert "only GeForce" in desc["theoretical"]["omitted"]["GEMM FP16"]  # type: ignore[index]


def test_cc_10_0_has_cuda_core_peaks_but_no_tensor_rates() -> None:
    info = _info("NVIDIA B200", 148, 1965, 8192, 3996, 10, 0)
    desc, ceilings = cuda_theoretical(info)
    c = _by_name(ceilings)
    assert c["FP64"].value == pytest.approx(c["FP32 vector"].value / 2)
    omitted = desc["theoretical"]["omitted"]  # type: ignore[index]
    for k in ("FP16 vector", "FP16 scalar ILP", "GEMM FP16", "GEMM TF32", "GEMM INT8", "GEMM FP64"):
        assert k not in c and omitted[k]


def test_fp16_scalar_derivation_states_its_rate() -> None:
    c = _by_name(cuda_theoretical(H200)[1])
    assert c["FP16 scalar ILP"].value == c["FP16 vector"].value
    assert "half of it" in c["FP16 scalar ILP"].from_


@pytest.mark.parametrize("cc", [(7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (12, 0)])
def test_table_covers_the_required_compute_capabilities(cc: Tuple[int, int]) -> None:
    assert cc in CUDA_CORE_RATES
    rates = CUDA_CORE_RATES[cc]
    assert rates.source and rates.fp16_source
    info = _info("NVIDIA test", 10, 1000, 128, 1000, *cc)
    names = {x.name for x in cuda_theoretical(info)[1]}
    assert {"FP32 vector", "FP64", "GEMM FP32"} <= names


def test_every_tensor_entry_has_a_source() -> None:
    for cc, entry in TENSOR_CORE_RATES.items():
        assert cc in CUDA_CORE_RATES
        assert entry.source
        assert set(entry.rates) <= {"FP64", "TF32", "FP16", "BF16", "FP8", "INT8"}


# ------------------------------------------------------------------ unknown and missing inputs


def test_unknown_compute_capability_gives_no_compute_ceilings_but_a_reason() -> None:
    info = _info("NVIDIA Future GPU", 200, 2000, 8192, 4000, 99, 0)
    desc, ceilings = cuda_theoretical(info)
    assert [c.name for c in ceilings] == ["DRAM bandwidth"]
    omitted = desc["theoretical"]["omitted"]  # type: ignore[index]
    for k in ALL_COMPUTE:
        assert "99.0" in omitted[k] and "not in the per-SM rate table" in omitted[k]


def test_missing_memory_keys_omit_bandwidth_with_a_reason() -> None:
    info = dict(H200)
    del info["memory_clock_hz"]
    del info["memory_bus_bits"]
    desc, ceilings = cuda_theoretical(info)
    names = {c.name for c in ceilings}
    assert "DRAM bandwidth" not in names
    assert "FP32 vector" in names
    reason = desc["theoretical"]["omitted"]["DRAM bandwidth"]  # type: ignore[index]
    assert "memory_clock_hz" in reason and "memory_bus_bits" in reason


@pytest.mark.parametrize(
    "info",
    [
        {},
        {"backend": "cuda"},
        {"backend": "cuda", "compute_units": True, "clock_hz": "fast", "cc_major": None},
        {
            "backend": "cuda",
            "compute_units": -3,
            "clock_hz": float("nan"),
            "memory_clock_hz": 0,
            "memory_bus_bits": 12.5,
            "compute_capability": "nine",
        },
        {"backend": "cuda", "compute_units": 132.0, "clock_hz": 1.98e9, "compute_capability": "9.0"},
    ],
)
def test_odd_info_never_raises(info: Dict[str, object]) -> None:
    desc, ceilings = cuda_theoretical(info)
    json.dumps(desc)
    theo = desc["theoretical"]
    assert isinstance(theo, dict)
    got = {c.name for c in ceilings}
    omitted = theo["omitted"]
    assert isinstance(omitted, dict)
    # every class is either a ceiling or omitted with a reason
    assert got | set(omitted) == {"DRAM bandwidth", *ALL_COMPUTE}
    assert all(isinstance(r, str) and r for r in omitted.values())


def test_compute_capability_string_is_a_fallback() -> None:
    info = dict(H200)
    del info["cc_major"]
    del info["cc_minor"]
    assert _gf(info, "FP32 vector") == _gf(H200, "FP32 vector")


# ------------------------------------------------------------------ dispatch in theoretical.device_theoretical


def test_device_theoretical_dispatches_cuda() -> None:
    assert theoretical.device_theoretical(H200) == cuda_theoretical(H200)


def test_device_theoretical_other_backends_are_empty() -> None:
    assert theoretical.device_theoretical({"backend": "vulkan", "name": "Radeon 780M"}) == ({}, [])  # no model yet
    assert theoretical.device_theoretical({}) == ({}, [])


def test_device_theoretical_cpu_path_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: List[Optional[object]] = []
    sentinel = object()
    ceiling = Ceiling(name="FP32 vector", kind="compute", value=1.0, unit="GFLOP/s", source="theoretical", from_="x")

    def fake_spec() -> object:
        calls.append(None)
        return sentinel

    monkeypatch.setattr(theoretical, "host_cpu_spec", fake_spec)
    monkeypatch.setattr(theoretical, "describe", lambda spec: {"spec": spec is sentinel})
    monkeypatch.setattr(theoretical, "theoretical_ceilings", lambda spec: [ceiling] if spec is sentinel else [])
    assert theoretical.device_theoretical({"backend": "cpu"}) == ({"theoretical": {"spec": True}}, [ceiling])
    assert len(calls) == 1
