"""The peak suite's launch size (suites/peak/suite.py, "Enough work on a GPU that reports no wave"): a
WebGPU GPU adapter launches at least UNKNOWN_WAVE_ITEMS work items, within its largest binding; a CPU
adapter and the CUDA, Metal and CPU backends keep PEAK_BUFFER_BYTES, a GPU that reports its wave whole
waves of it; the quick-run prediction counts the same work items."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List

import pytest

from apple_roofline.suites.base import ITEMSIZE, SuiteContext
from apple_roofline.suites.fma import FMA_KERNELS
from apple_roofline.suites.peak import suite as peak_suite
from apple_roofline.suites.peak.suite import (
    PEAK_BUFFER_BYTES,
    PEAK_VARIANTS,
    UNKNOWN_WAVE_ITEMS,
    PeakSuite,
    peak_items,
    reports_no_wave,
)
from apple_roofline.suites.peak.work import peak_work
from apple_roofline.suites.work import QUICK_SHRINK_OPTION

GIB = 1 << 30


def _ctx(backend: str = "wgpu", *, quick: bool = False, **info: Any) -> SuiteContext:
    options = {QUICK_SHRINK_OPTION: 1} if quick else {}
    return SuiteContext(object(), backend, {"backend": backend, **info}, quick, 1 << 20, options)


def test_only_a_webgpu_gpu_adapter_reports_no_wave() -> None:
    for kind in ("DiscreteGPU", "IntegratedGPU", "VirtualGPU", "Unknown"):
        assert reports_no_wave({"backend": "wgpu", "adapter_type": kind})
    assert not reports_no_wave({"backend": "wgpu", "adapter_type": "CPU"})  # lavapipe, WARP
    for backend in ("cuda", "metal", "cpu"):
        assert not reports_no_wave({"backend": backend, "name": "a device"})


@pytest.mark.parametrize("item_bytes", [8, 16, 32, 64])
def test_a_gpu_adapter_launches_at_least_the_minimum(item_bytes: int) -> None:
    ctx = _ctx(adapter_type="DiscreteGPU", max_buffer_bytes=2 * GIB)
    assert peak_items(ctx, item_bytes) == UNKNOWN_WAVE_ITEMS == 1 << 23
    quick = _ctx(quick=True, adapter_type="DiscreteGPU", max_buffer_bytes=2 * GIB)
    assert peak_items(quick, item_bytes) == UNKNOWN_WAVE_ITEMS // 4  # the quick run's quarter


def test_the_minimum_stops_at_the_largest_binding() -> None:
    ctx = _ctx(adapter_type="IntegratedGPU", max_buffer_bytes=128 << 20)  # WebGPU's default binding
    assert peak_items(ctx, 16) == UNKNOWN_WAVE_ITEMS  # 128 MiB exactly
    assert peak_items(ctx, 64) == (128 << 20) // 64
    small = _ctx(adapter_type="IntegratedGPU", max_buffer_bytes=1 << 20)  # never below the 4 MiB buffers
    assert peak_items(small, 64) == PEAK_BUFFER_BYTES // 64


def test_cpu_adapters_and_the_native_backends_keep_the_buffer() -> None:
    for ctx in (_ctx(adapter_type="CPU", max_buffer_bytes=128 << 20), _ctx("cuda"), _ctx("metal"), _ctx("cpu")):
        assert peak_items(ctx, 16) == PEAK_BUFFER_BYTES // 16
        assert peak_items(ctx, 64) == PEAK_BUFFER_BYTES // 64


def _planned(monkeypatch: pytest.MonkeyPatch, ctx: SuiteContext, wave: int) -> List[Dict[str, Any]]:
    """The work items and extra parameters of each case PeakSuite plans, the kernels reporting ``wave``."""
    got: List[Dict[str, Any]] = []

    def chain_case(build: Any, F: int, items: int, bufs: Any, extra: Any, reference: Any, **_: Any) -> Any:
        got.append({"variant": build.kdef.name, "dtype": build.kdef.dtype, "items": items, **dict(extra or {})})
        return SimpleNamespace(rebind=None)

    monkeypatch.setattr(peak_suite, "chain_case", chain_case)
    monkeypatch.setattr(peak_suite, "wave_items", lambda *_a: wave)
    monkeypatch.setattr(peak_suite, "prebuild", lambda *_a: None)
    monkeypatch.setattr(peak_suite, "BufferPair", lambda _b: SimpleNamespace(get=lambda n: (n, n)))
    monkeypatch.setattr(PeakSuite, "source", lambda self, kdef: ("src", kdef.name))
    monkeypatch.setattr(PeakSuite, "constants", lambda self, kdef: {"BLOCK": 256})
    list(PeakSuite(ctx).cases())
    return got


def test_the_suite_plans_its_cases_by_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu = _planned(monkeypatch, _ctx(adapter_type="DiscreteGPU", max_buffer_bytes=2 * GIB), 0)
    assert len(gpu) == len(PEAK_VARIANTS) and all(c["items"] == UNKNOWN_WAVE_ITEMS for c in gpu)
    cpu = _planned(monkeypatch, _ctx(adapter_type="CPU", max_buffer_bytes=128 << 20), 0)
    for c in cpu:
        assert c["items"] == PEAK_BUFFER_BYTES // (FMA_KERNELS[c["variant"]].elems_per_item * ITEMSIZE[c["dtype"]])
    wave = 132 * 2048  # a GPU that reports its wave: whole waves, at least 4, as before
    cuda = _planned(monkeypatch, _ctx("cuda"), wave)
    assert all(c["items"] % wave == 0 and c["waves"] >= 4 for c in cuda)


def test_the_quick_plan_counts_the_same_work_items() -> None:
    ctx = _ctx(adapter_type="DiscreteGPU", max_buffer_bytes=2 * GIB, fp16_arithmetic=True)
    for w in peak_work(ctx):
        variant = w.label.split("/")[1]
        assert w.launch_flops == FMA_KERNELS[variant].flops_per_item(512) * UNKNOWN_WAVE_ITEMS, w.label
