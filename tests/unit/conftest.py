"""Fixtures for the unit tier: synthetic runs built in code, no native module.

The synthetic run resembles the M5 GPU roofline analysis: STREAM triad at
122 GB/s, FP32 float4 peak 815 GFLOP/s, FP32 scalar ILP 3,849 GFLOP/s, FP16
scalar 6,004 GFLOP/s, and sweeps of ``vec4`` and ``scalar8`` over F = 1..1024.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

import pytest

from apple_roofline.roofline import Ceiling, Measurement, Run, Skipped, derive_ceilings
from apple_roofline.study import ToolInfo

_BLOCKED = ("apple_roofline._native", "apple_roofline._core")


@pytest.fixture(autouse=True)
def no_native_extension() -> Iterator[None]:
    """The unit tier never calls the native extension: importing it fails inside these tests
    (docs/design/testing.md, "Tests"); what needs it lives in tests/native."""
    saved = {name: sys.modules.get(name) for name in _BLOCKED}
    for name in _BLOCKED:
        sys.modules[name] = None  # type: ignore[assignment]
    yield
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


#: What ``_core.backends()`` says on a machine with a CPU, no CUDA driver and no Metal.
FAKE_REGISTRY: Tuple[Mapping[str, Any], ...] = (
    {"name": "cpu", "compiled": True, "devices": 1, "reason": ""},
    {"name": "cuda", "compiled": True, "devices": 0, "reason": "libcuda.so.1 not found"},
    {"name": "metal", "compiled": False, "devices": 0, "reason": "Metal is built on macOS only"},
)


@pytest.fixture
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Device resolution against :data:`FAKE_REGISTRY` instead of the extension's."""
    import apple_roofline.devices as devices

    monkeypatch.setattr(devices, "backend_registry", lambda: [dict(b) for b in FAKE_REGISTRY])


# offsets with median exactly 0, so the median sample is exactly t
_SPREAD = (-0.004, -0.003, -0.002, -0.001, 0.0, 0.0, 0.001, 0.002, 0.003, 0.004)
_NOISY = (-0.2, -0.15, -0.1, -0.05, 0.0, 0.0, 0.05, 0.1, 0.15, 0.2)

MakeMeasurement = Callable[..., Measurement]


#: make_measurement's optional fields and their defaults: the measurement's params, its
#: validation, noisy samples (a 40 % spread instead of 0.8 %), its ceiling class and kind, and how
#: many samples it has (1 to 10).
MEASUREMENT_OPTIONS: Dict[str, Any] = {
    "params": None,
    "valid": True,
    "noisy": False,
    "ceiling_class": None,
    "ceiling_kind": None,
    "n": 10,
}


def make_measurement(
    suite: str,
    kernel: str,
    dtype: str,
    *,
    flops: int,
    bytes: int,
    gflops: Optional[float] = None,
    gbps: Optional[float] = None,
    **options: Any,
) -> Measurement:
    """A measurement whose median time gives exactly ``gflops`` (or ``gbps``); ``options`` are those
    of :data:`MEASUREMENT_OPTIONS`. Raises ValueError without a rate, TypeError on another option."""
    unknown = sorted(set(options) - set(MEASUREMENT_OPTIONS))
    if unknown:
        raise TypeError(f"make_measurement() got an unexpected keyword argument {unknown[0]!r}")
    o = {**MEASUREMENT_OPTIONS, **options}
    if gflops is not None:
        t = flops / (gflops * 1e9)
    elif gbps is not None:
        t = bytes / (gbps * 1e9)
    else:
        raise ValueError("give gflops or gbps")
    spread = _NOISY if o["noisy"] else _SPREAD
    if o["n"] == 1:
        samples: Tuple[float, ...] = (t,)
    else:
        samples = tuple(t * (1 + d) for d in spread[: o["n"]])
    return Measurement(
        suite=suite,
        kernel=kernel,
        dtype=dtype,
        params=o["params"] or {},
        flops=flops,
        bytes=bytes,
        samples_s=samples,
        valid=o["valid"],
        ceiling_class=o["ceiling_class"],
        ceiling_kind=o["ceiling_kind"],
        validation="max rel err 3.1e-07 <= tol 1.2e-04" if o["valid"] else "max rel err 0.5 > tol 1.2e-04",
    )


BW = 122.0
FP32_VEC = 815.0
FP32_ILP = 3849.0
FP16_ILP = 6004.0


def _m5_stream() -> List[Measurement]:
    """STREAM copy, scale, add and triad over 256 MiB fp32 arrays, the triad at BW."""
    n = 64 * 1024 * 1024  # 256 MiB of fp32 per array
    return [
        make_measurement(
            "stream",
            kernel,
            "fp32",
            flops=0 if kernel == "copy" else (1 if kernel != "triad" else 2) * n,
            bytes=per_elem * n,
            gbps=rate,
            params={"n": n},
            ceiling_class="DRAM bandwidth",
            ceiling_kind="bandwidth",
        )
        for kernel, per_elem, rate in (("copy", 8, 118.0), ("scale", 8, 119.5), ("add", 12, 121.0), ("triad", 12, BW))
    ]


def _m5_sweeps() -> List[Measurement]:
    """The vec4 and scalar8 sweeps over F = 1..1024, each under its roof and the bandwidth's slope."""
    ms: List[Measurement] = []
    threads = 4 * 1024 * 1024
    for kernel, fpt, bpt, roof in (("vec4", 32, 32, FP32_VEC), ("scalar8", 16, 64, FP32_ILP)):
        for i in range(11):
            f = 2**i
            ai = fpt * f / bpt
            rate = min(roof * 0.97, BW * 0.95 * ai)
            ms.append(
                make_measurement(
                    "sweep",
                    kernel,
                    "fp32",
                    flops=fpt * f * threads,
                    bytes=bpt * threads,
                    gflops=rate,
                    params={"F": f},
                )
            )
    return ms


def _m5_peaks() -> List[Measurement]:
    """The FP32 and FP16 peak variants (one invalid, never a ceiling)."""
    small = 4 * 1024 * 1024
    peaks = (
        ("vec4_cross4", "fp32", FP32_VEC, "FP32 vector", True),
        ("scalar_indep8", "fp32", FP32_ILP, "FP32 scalar ILP", True),
        ("scalar_indep4", "fp32", 2100.0, "FP32 scalar ILP", True),
        ("vec4_indep8", "fp32", 9999.0, "FP32 vector", False),  # invalid: never a ceiling
        ("vec4_cross4", "fp16", 1620.0, "FP16 vector", True),
        ("scalar_indep32", "fp16", FP16_ILP, "FP16 scalar ILP", True),
    )
    return [
        make_measurement(
            "peak",
            kernel,
            dtype,
            flops=512 * 16 * small,
            bytes=2 * small,
            gflops=rate,
            params={"F": 512},
            ceiling_class=cls,
            ceiling_kind="compute",
            valid=valid,
        )
        for kernel, dtype, rate, cls, valid in peaks
    ]


def _m5_gemm() -> List[Measurement]:
    """SGEMM at N = 256 (noisy), 1024 and 4096."""
    return [
        make_measurement(
            "gemm",
            "sgemm",
            "fp32",
            flops=2 * nn**3,
            bytes=3 * nn * nn * 4,
            gflops=rate,
            params={"N": nn},
            ceiling_class="GEMM FP32",
            ceiling_kind="compute",
            noisy=(nn == 256),
        )
        for nn, rate in ((256, 300.0), (1024, 1100.0), (4096, 1790.0))
    ]


def m5_measurements() -> List[Measurement]:
    """The synthetic M5 run's measurements (module docstring): stream, sweeps, peaks, SGEMM."""
    return _m5_stream() + _m5_sweeps() + _m5_peaks() + _m5_gemm()


THEORETICAL = (
    Ceiling("DRAM bandwidth", "bandwidth", 153.6, "GB/s", "theoretical", "LPDDR5X-9600, 128-bit bus"),
    Ceiling("FP32 scalar ILP", "compute", 4096.0, "GFLOP/s", "theoretical", "10 cores x 128 ALUs x 2 x 1.6 GHz"),
    Ceiling("FP16 scalar ILP", "compute", 8192.0, "GFLOP/s", "theoretical", "2x FP32 rate"),
)


def build_m5_run(*, complete: bool = True, theoretical: bool = True, name: str = "Apple M5") -> Run:
    ms = m5_measurements()
    ceilings = derive_ceilings(ms) + (list(THEORETICAL) if theoretical else [])
    return Run(
        tool=ToolInfo("apple_roofline", "0.1.0", "abc1234"),
        created="2026-11-20T12:34:56+00:00",
        host={"os": "macOS 26.1", "machine": "arm64", "memory_bytes": 16 * 2**30},
        device={"backend": "metal", "name": name, "gpu_cores": 10},
        command=("apple-roofline", "run", "--suite", "all"),
        measurements=tuple(ms),
        ceilings=tuple(ceilings),
        skipped=(Skipped("peak", "scalar_indep8", "fp64", "no FP64 arithmetic on this GPU"),),
        warnings=("GPU clocks not readable",),
        complete=complete,
    )


@pytest.fixture
def make_m() -> MakeMeasurement:
    """Factory: make_m(suite, kernel, dtype, flops=..., bytes=..., gflops=... | gbps=...)."""
    return make_measurement


@pytest.fixture
def m5_run() -> Run:
    """A complete synthetic M5-like run with measured and theoretical ceilings."""
    return build_m5_run()


@pytest.fixture
def m5_run_b() -> Run:
    """A second run (different device, lower numbers) for comparisons."""
    base = build_m5_run(name="Apple M4", theoretical=False)
    scaled = tuple(Ceiling(c.name, c.kind, c.value * 0.8, c.unit, c.source, c.from_) for c in base.ceilings)
    return base.with_ceilings(scaled)
