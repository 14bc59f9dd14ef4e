"""Unit tests for the CPU model of apple_roofline.theoretical: theoretical CPU peaks from fake /proc + /sys trees."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from apple_roofline import theoretical
from apple_roofline.theoretical import CpuSpec, Figure, describe, host_cpu_spec, theoretical_ceilings

ZEN5_FLAGS = (
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat sse sse2 ht syscall nx lm "
    "constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq pni ssse3 fma sse4_1 sse4_2 avx f16c "
    "hypervisor avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi"
)
SKX_FLAGS = "fpu sse sse2 ht constant_tsc fma avx avx2 avx512f avx512dq avx512cd avx512bw avx512vl"
N1_FEATURES = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs"


def _x86_block(i: int, vendor: str, family: int, model: int, name: str, flags: str, phys: int, core: int) -> str:
    return (
        f"processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
        f"model name\t: {name}\nstepping\t: 1\ncpu MHz\t\t: 2596.120\nphysical id\t: {phys}\n"
        f"core id\t\t: {core}\nflags\t\t: {flags}\n\n"
    )


def _arm_block(i: int, impl: int, part: int, features: str = N1_FEATURES) -> str:
    return (
        f"processor\t: {i}\nBogoMIPS\t: 50.00\nFeatures\t: {features}\nCPU implementer\t: {impl:#x}\n"
        f"CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: {part:#05x}\nCPU revision\t: 1\n\n"
    )


def _tree(root: Path, cpuinfo: str, max_khz: Optional[Dict[int, int]] = None) -> str:
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "cpuinfo").write_text(cpuinfo)
    for cpu, khz in (max_khz or {}).items():
        d = root / "sys" / "devices" / "system" / "cpu" / f"cpu{cpu}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "cpuinfo_max_freq").write_text(f"{khz}\n")
    return str(root)


def _never() -> float:
    raise AssertionError("the clock was readable: measure_clock must not be called")


# ------------------------------------------------------------------ this host: Zen 5 under KVM


@pytest.fixture
def zen5_kvm(tmp_path: Path) -> str:
    info = "".join(_x86_block(i, "AuthenticAMD", 26, 2, "AMD EPYC", ZEN5_FLAGS, 0, i) for i in range(2))
    return _tree(tmp_path, info)


def test_zen5_kvm_measures_clock_and_computes_avx512_peak(zen5_kvm: str) -> None:
    calls: List[int] = []

    def measure() -> float:
        calls.append(1)
        return 3.0e9

    s = host_cpu_spec(None, measure_clock=measure, proc_root=zen5_kvm)
    assert calls == [1]
    assert (s.vendor, s.arch, s.model) == ("AMD", "x86_64", "AMD EPYC")
    assert s.physical_cores.value == 2 and s.logical_cpus == 2
    assert s.vector_bits.value == 512 and "/proc/cpuinfo flags" in s.vector_bits.source
    assert s.clock_hz.value == 3.0e9
    assert s.clock_hz.source.startswith("measured: dependent integer-add chain")
    assert s.fma_pipes.value == 2
    assert "Zen 5" in s.fma_pipes.source and "#58455" in s.fma_pipes.source
    # 2 cores × 16 lanes × 2 pipes × 2 FLOP × 3.0 GHz
    assert s.peak_gflops("fp32") == pytest.approx(384.0)
    assert s.peak_gflops("fp64") == pytest.approx(192.0)
    assert s.peak_gflops("fp16") is None
    assert s.derivation("fp32") == "2 cores × 16 lanes × 2 FMA pipes × 2 FLOP × 3.00 GHz = 384.0 GFLOP/s"
    assert any("hypervisor" in n for n in s.notes)


def test_zen5_with_native_features_avx2_build(zen5_kvm: str) -> None:
    feats = {
        "arch": "x86_64",
        "isa": "avx2",
        "vector_bits": 256,
        "fma": True,
        "fp16_arithmetic": False,
        "logical_cpus": 2,
        "threads": 2,
    }
    s = host_cpu_spec(feats, measure_clock=lambda: 2.5e9, proc_root=zen5_kvm)
    assert "cpu_features()" in s.vector_bits.source and "isa=avx2" in s.vector_bits.source
    # 256-bit ops on 512-bit pipes: still 2 FMA/cycle, 8 FP32 lanes.
    assert s.fma_pipes.value == 2
    assert s.peak_gflops("fp32") == pytest.approx(2 * 8 * 2 * 2 * 2.5)


def test_measure_failure_falls_back_to_current_mhz_and_says_so(zen5_kvm: str) -> None:
    def broken() -> float:
        raise ImportError("no _core")

    s = host_cpu_spec(None, measure_clock=broken, proc_root=zen5_kvm)
    assert s.clock_hz.value == pytest.approx(2596.12e6)
    assert "CURRENT" in s.clock_hz.source and "not a maximum" in s.clock_hz.source
    assert "ImportError" in s.clock_hz.source


def test_clock_unknown_when_nothing_readable(tmp_path: Path) -> None:
    info = _x86_block(0, "AuthenticAMD", 26, 2, "AMD EPYC", ZEN5_FLAGS, 0, 0).replace("cpu MHz\t\t: 2596.120\n", "")
    root = _tree(tmp_path, info)

    def broken() -> float:
        raise AttributeError("module has no attribute measure_cpu_clock_hz")

    s = host_cpu_spec(None, measure_clock=broken, proc_root=root)
    assert not s.clock_hz.known and s.clock_hz.source.startswith("unknown:")
    assert s.peak_gflops("fp32") is None
    assert "clock" in (s.omitted_reason("fp32") or "")
    assert theoretical_ceilings(s) == []


# ------------------------------------------------------------------ Intel Skylake-SP with cpufreq


def _skx(tmp_path: Path, name: str) -> str:
    # 2 cores with Hyper-Threading: 4 logical CPUs.
    info = "".join(_x86_block(i, "GenuineIntel", 6, 85, name, SKX_FLAGS, 0, i % 2) for i in range(4))
    return _tree(tmp_path, info, {0: 3700000})


AVX512_FEATS = {
    "arch": "x86_64",
    "isa": "avx512",
    "vector_bits": 512,
    "fma": True,
    "fp16_arithmetic": False,
    "logical_cpus": 4,
    "threads": 4,
}


def test_skylake_sp_gold_uses_cpufreq_and_two_fma_units(tmp_path: Path) -> None:
    root = _skx(tmp_path, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz")
    s = host_cpu_spec(AVX512_FEATS, measure_clock=_never, proc_root=root)
    assert s.vendor == "Intel"
    assert s.physical_cores.value == 2 and s.logical_cpus == 4
    assert s.clock_hz.value == 3.7e9 and "cpuinfo_max_freq" in s.clock_hz.source
    assert s.fma_pipes.value == 2 and "ARK" in s.fma_pipes.source
    assert s.peak_gflops("fp32") == pytest.approx(2 * 16 * 2 * 2 * 3.7)
    assert s.peak_gflops("fp64") == pytest.approx(2 * 8 * 2 * 2 * 3.7)


def test_skylake_sp_silver_has_one_fma_unit(tmp_path: Path) -> None:
    root = _skx(tmp_path, "Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz")
    s = host_cpu_spec(AVX512_FEATS, measure_clock=_never, proc_root=root)
    assert s.fma_pipes.value == 1
    assert s.peak_gflops("fp32") == pytest.approx(2 * 16 * 1 * 2 * 3.7)
    # With AVX2 kernels the two 256-bit FMA ports are both usable.
    s2 = host_cpu_spec({**AVX512_FEATS, "isa": "avx2", "vector_bits": 256}, measure_clock=_never, proc_root=root)
    assert s2.fma_pipes.value == 2


def test_zen4_avx512_counts_effective_width(tmp_path: Path) -> None:
    info = _x86_block(0, "AuthenticAMD", 25, 0x61, "AMD Ryzen 9 7950X", ZEN5_FLAGS, 0, 0)
    root = _tree(tmp_path, info, {0: 5000000})
    s = host_cpu_spec(AVX512_FEATS, measure_clock=_never, proc_root=root)
    assert "Zen 4" in s.fma_pipes.source
    assert s.fma_pipes.value == 1.0  # 512-bit ops double-pumped on 2 × 256-bit pipes
    assert s.peak_gflops("fp32") == pytest.approx(1 * 16 * 1 * 2 * 5.0)


# ------------------------------------------------------------------ Arm Neoverse N1


def test_neoverse_n1(tmp_path: Path) -> None:
    info = "".join(_arm_block(i, 0x41, 0xD0C) for i in range(4))
    root = _tree(tmp_path, info, {0: 2500000})
    s = host_cpu_spec(None, measure_clock=_never, proc_root=root)
    assert (s.vendor, s.arch) == ("Arm", "arm64")
    assert s.physical_cores.value == 4 and s.logical_cpus == 4
    assert s.vector_bits.value == 128 and "asimd" in s.vector_bits.source
    assert s.fp16 is True
    assert s.fma_pipes.value == 2 and "Neoverse N1" in s.fma_pipes.source
    assert s.peak_gflops("fp32") == pytest.approx(4 * 4 * 2 * 2 * 2.5)
    assert s.peak_gflops("fp64") == pytest.approx(4 * 2 * 2 * 2 * 2.5)
    assert s.peak_gflops("fp16") == pytest.approx(4 * 8 * 2 * 2 * 2.5)
    names = [c.name for c in theoretical_ceilings(s)]
    assert names == [
        "FP32 vector",
        "FP32 scalar ILP",
        "FP16 vector",
        "FP16 scalar ILP",
        "FP64",
        "GEMM FP32",
        "GEMM FP64",
    ]


def test_heterogeneous_arm_sums_groups(tmp_path: Path) -> None:
    # M1 under Linux (Asahi): 4 Icestorm (cpu0-3) + 4 Firestorm (cpu4-7), cpufreq per cluster.
    info = "".join(_arm_block(i, 0x61, 0x022) for i in range(4))
    info += "".join(_arm_block(i, 0x61, 0x023) for i in range(4, 8))
    root = _tree(tmp_path, info, {0: 2064000, 4: 3204000})
    s = host_cpu_spec(None, measure_clock=_never, proc_root=root)
    assert [g.uarch for g in s.groups()] == ["Apple Icestorm (M1 E-core)", "Apple Firestorm (M1 P-core)"]
    want = (4 * 4 * 2 * 2 * 2.064) + (4 * 4 * 4 * 2 * 3.204)
    assert s.peak_gflops("fp32") == pytest.approx(want)
    assert s.derivation("fp32").count(" + ") == 1
    assert s.physical_cores.value == 8


def test_big_little_with_unknown_core_type_omits_peak(tmp_path: Path) -> None:
    info = "".join(_arm_block(i, 0x41, 0xD0B) for i in range(4))
    info += "".join(_arm_block(i, 0x41, 0xD05) for i in range(4, 8))  # Cortex-A55: not in table
    root = _tree(tmp_path, info, {0: 2400000, 4: 1800000})
    s = host_cpu_spec(None, measure_clock=_never, proc_root=root)
    assert s.peak_gflops("fp32") is None
    assert "unknown microarchitecture" in (s.omitted_reason("fp32") or "")


# ------------------------------------------------------------------ unknown CPU


def test_unknown_cpu_has_no_theoretical_ceilings(tmp_path: Path) -> None:
    info = _x86_block(0, "HygonGenuine", 24, 1, "Hygon C86 7185", ZEN5_FLAGS.replace("avx512f", ""), 0, 0)
    root = _tree(tmp_path, info, {0: 2000000})
    s = host_cpu_spec(None, measure_clock=_never, proc_root=root)
    assert not s.fma_pipes.known
    assert "unknown microarchitecture" in s.fma_pipes.source and "HygonGenuine" in s.fma_pipes.source
    for dtype in ("fp32", "fp64"):
        assert s.peak_gflops(dtype) is None
        assert s.derivation(dtype).startswith("not available: ")
    assert theoretical_ceilings(s) == []
    d = describe(s)
    assert d["fma_pipes"] is None and "unknown" in str(d["fma_pipes_source"])
    json.dumps(d)  # serialisable despite unknown (nan) figures


# ------------------------------------------------------------------ macOS (fake sysctl)


def _fake_sysctl(values: Dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda name: values.get(name)


def test_apple_m1_groups_and_unknown_e_clock() -> None:
    sc = _fake_sysctl(
        {
            "machdep.cpu.brand_string": "Apple M1",
            "hw.logicalcpu": "8",
            "hw.perflevel0.physicalcpu": "4",
            "hw.perflevel1.physicalcpu": "4",
        }
    )
    s = host_cpu_spec(
        {"arch": "arm64", "isa": "neon", "vector_bits": 128, "fma": True, "fp16_arithmetic": True, "logical_cpus": 8},
        measure_clock=lambda: 3.2e9,
        proc_root="/nonexistent",
        sysctl=sc,
    )
    assert s.vendor == "Apple" and s.arch == "arm64"
    p, e = s.groups()
    assert (p.name, p.cores.value, p.fma_pipes.value) == ("P", 4, 4)
    assert (e.name, e.cores.value, e.fma_pipes.value) == ("E", 4, 2)
    assert p.clock_hz.value == 3.2e9 and p.clock_hz.source.startswith("measured")
    assert "dougallj" in e.fma_pipes.source
    # E-core clock cannot be read or pinned: the summed peak is withheld, with the reason.
    assert not e.clock_hz.known
    assert s.peak_gflops("fp32") is None
    assert (s.omitted_reason("fp32") or "").startswith("E cores: clock")


def test_apple_unverified_chip_is_unknown() -> None:
    sc = _fake_sysctl(
        {"machdep.cpu.brand_string": "Apple M3 Pro", "hw.perflevel0.physicalcpu": "6", "hw.perflevel1.physicalcpu": "6"}
    )
    s = host_cpu_spec(None, measure_clock=lambda: 4.0e9, proc_root="/nonexistent", sysctl=sc)
    assert "unknown microarchitecture: Apple M3" in s.fma_pipes.source
    assert s.peak_gflops("fp32") is None


# ------------------------------------------------------------------ pure CpuSpec behaviour


def _spec(clock: float = 2.6e9, fp16: bool = False) -> CpuSpec:
    return CpuSpec(
        model="test",
        vendor="AMD",
        arch="x86_64",
        physical_cores=Figure(2, "cores", "test"),
        logical_cpus=2,
        clock_hz=Figure(clock, "Hz", "test clock"),
        vector_bits=Figure(512, "bits", "test"),
        fma_pipes=Figure(2, "pipes", "test table"),
        fp16=fp16,
    )


def test_derivation_format_matches_issue_example() -> None:
    s = _spec()
    assert s.derivation("fp32") == "2 cores × 16 lanes × 2 FMA pipes × 2 FLOP × 2.60 GHz = 332.8 GFLOP/s"
    assert s.peak_gflops("fp16") is None
    assert _spec(fp16=True).peak_gflops("fp16") == pytest.approx(665.6)


def test_bad_dtype_raises() -> None:
    with pytest.raises(ValueError):
        _spec().peak_gflops("int8")
    with pytest.raises(ValueError):
        _spec().derivation("bf16")


def test_figure_unknown() -> None:
    f = Figure.unknown("Hz", "why")
    assert math.isnan(f.value) and not f.known and f.source == "unknown: why"
    assert Figure(1.0, "Hz", "x").known


def test_theoretical_ceilings_pair_with_measured_names() -> None:
    pytest.importorskip("apple_roofline.study.records")
    cs = theoretical_ceilings(_spec(fp16=True))
    by = {c.name: c for c in cs}
    assert set(by) == {
        "FP32 vector",
        "FP32 scalar ILP",
        "FP16 vector",
        "FP16 scalar ILP",
        "FP64",
        "GEMM FP32",
        "GEMM FP64",
    }
    assert all(c.source == "theoretical" and c.kind == "compute" and c.unit == "GFLOP/s" for c in cs)
    assert by["FP32 vector"].value == by["FP32 scalar ILP"].value == by["GEMM FP32"].value == pytest.approx(332.8)
    assert by["FP64"].value == by["GEMM FP64"].value == pytest.approx(166.4)
    assert by["FP16 vector"].value == pytest.approx(665.6)
    assert by["FP64"].from_.endswith("= 166.4 GFLOP/s")
    assert not any(c.kind == "bandwidth" for c in cs)


def test_describe_block() -> None:
    d = describe(_spec())
    assert d["clock_hz"] == 2.6e9 and d["clock_source"] == "test clock"
    assert d["fma_pipes_source"] == "test table"
    theo = d["theoretical"]
    assert isinstance(theo, dict)
    assert theo["fp32"]["gflops"] == pytest.approx(332.8)
    assert theo["fp16"]["gflops"] is None
    assert d["theoretical_bandwidth"] is None and "dmidecode" in str(d["theoretical_bandwidth_note"])
    json.dumps(d)


def test_module_does_not_import_native_core_at_import_time() -> None:
    import ast

    modules = sorted(Path(theoretical.__file__).parent.glob("*.py"))
    assert len(modules) > 1
    for path in modules:
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: lazy imports inside functions are allowed
            if isinstance(node, ast.ImportFrom):
                assert "_core" not in (node.module or "") and all(a.name != "_core" for a in node.names)
            if isinstance(node, ast.Import):
                assert all("_core" not in a.name for a in node.names)


@pytest.mark.parametrize(
    "vendor,family,model,bits,pipes",
    [
        ("AuthenticAMD", 0x17, 0x01, 256, 1.0),  # Zen 1: 2 x 128-bit, AVX2 split in two
        ("AuthenticAMD", 0x17, 0x71, 256, 2.0),  # Zen 2
        ("AuthenticAMD", 0x19, 0x21, 256, 2.0),  # Zen 3
        ("AuthenticAMD", 0x1A, 0x44, 512, 2.0),  # Zen 5 desktop
        ("AuthenticAMD", 0x1A, 0x24, 512, 1.0),  # Zen 5 Strix Point: 256-bit datapath
        ("GenuineIntel", 6, 0x9E, 256, 2.0),  # Coffee Lake
        ("GenuineIntel", 6, 0x8C, 512, 1.0),  # Tiger Lake: one fused 512-bit FMA
        ("GenuineIntel", 6, 0x8F, 512, 2.0),  # Sapphire Rapids
    ],
)
def test_x86_table(tmp_path: Path, vendor: str, family: int, model: int, bits: int, pipes: float) -> None:
    root = _tree(tmp_path, _x86_block(0, vendor, family, model, "cpu", SKX_FLAGS, 0, 0), {0: 3000000})
    feats = {**AVX512_FEATS, "vector_bits": bits}
    s = host_cpu_spec(feats, measure_clock=_never, proc_root=root)
    assert s.fma_pipes.value == pipes
    assert s.peak_gflops("fp32") == pytest.approx(1 * (bits // 32) * pipes * 2 * 3.0)
