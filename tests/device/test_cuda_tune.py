"""Threadgroup-size tuning on a CUDA GPU: the kernel's block facts, a too-large block rejected by the
occupancy limits, and a real tuning study of the peak and stream suites (every point validated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_core = pytest.importorskip("apple_roofline._native")._core

_ROW = next(b for b in _core.backends() if b["name"] == "cuda")
if not (_ROW["compiled"] and _ROW["devices"] > 0):
    pytest.skip(f"no CUDA device: {_ROW['reason']}", allow_module_level=True)

HEAVY = r"""
extern "C" __global__ void heavy(float* y, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)BLOCK + threadIdx.x;
  if (i < n) y[i] = 1.0f;
}
"""


@pytest.fixture(scope="module")
def cuda() -> Any:
    return _core.Backend("cuda", 0)


def test_kernel_reports_block_simd_width_and_maximum(cuda: Any) -> None:
    k = cuda.compile(HEAVY, "heavy", {"BLOCK": 128})
    assert k.block == 128 and k.simd_width == cuda.info()["warp_size"]
    assert 128 <= k.max_block <= cuda.info()["max_threads_per_block"]
    assert k.wave_items % 128 == 0 and k.wave_items > 0


def test_tune_peak_and_stream(tmp_path: Path) -> None:
    from apple_roofline.tuning import TuneOptions, run_tune
    from apple_roofline.tuning.outputs import write_tune

    study = run_tune(
        "cuda:0",
        TuneOptions(
            suites=["stream", "peak"],
            kernels=["triad", "vec4_indep4"],
            blocks=[64, 256, 1024],
            reps=3,
            array_bytes=16 << 20,
        ),
    )
    assert study.measurements and all(m.valid for m in study.measurements), study.warnings
    assert set(study.blocks()) == {"stream/triad/fp32", "peak/vec4_indep4/fp32", "peak/vec4_indep4/fp16"}
    for m in study.measurements:
        assert m.params["resident_threads_per_sm"] == m.params["resident_blocks_per_sm"] * m.params["block"]
        if m.suite == "peak":  # whole waves at every size
            assert m.params["waves"] >= 4 and m.params["n"] % m.params["wave_items"] == 0
    written, problems = write_tune(study, tmp_path)
    assert len(written) == 3 and not problems


def test_bad_block_is_a_one_line_error() -> None:
    from apple_roofline.errors import OptionError
    from apple_roofline.tuning import TuneOptions, run_tune

    with pytest.raises(OptionError, match="multiples of 32 from 32 to 1024"):
        run_tune("cuda:0", TuneOptions(suites=["peak"], blocks=[100], reps=2))
