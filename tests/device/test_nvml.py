"""NVML on a real NVIDIA GPU (docs/design/power.md, "Clocks and power"): the sampler finds the CUDA
backend's GPU by its PCI bus id, reads its clocks, and says which power reading it uses (the
instantaneous field where the GPU has it, else the 1-s average, with the reason). Skipped without a
CUDA device or without nvidia-ml-py."""

from __future__ import annotations

import pytest

_core = pytest.importorskip("apple_roofline._native")._core
_ROW = next(b for b in _core.backends() if b["name"] == "cuda")
if not (_ROW["compiled"] and _ROW["devices"] > 0):
    pytest.skip(f"no CUDA device: {_ROW['reason']}", allow_module_level=True)
pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed (pip install 'apple_roofline[power]')")

from apple_roofline.telemetry import sampler_for  # noqa: E402
from apple_roofline.telemetry.nvml import AVERAGE, INSTANT, INSTANT_AVERAGE_S, USAGE_AVERAGE_S  # noqa: E402


def test_nvml_reads_the_cuda_gpu() -> None:
    info = dict(_core.Backend("cuda", 0).info())
    s = sampler_for("cuda", 0, info)
    s.start()
    try:
        s.poll()
    finally:
        s.stop()
    assert s.reason == "", s.reason
    values = s.samples()[-1].values
    assert values["sm_clock_mhz"] > 0 and values["mem_clock_mhz"] > 0
    d = s.describe()
    if "power_w" in values:
        assert values["power_w"] > 0
        assert (d["power_source"], d["power_average_s"]) in ((INSTANT, INSTANT_AVERAGE_S), (AVERAGE, USAGE_AVERAGE_S))
    print(d)  # the lead reads which power reading this GPU gave (pytest -s)
