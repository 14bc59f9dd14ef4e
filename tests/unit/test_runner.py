"""Runner helpers that need no device: STREAM array_bytes defaults and limits, ladder warnings, provenance."""

from __future__ import annotations

import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.options import check_array_bytes, default_array_bytes
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.records import Measurement
from apple_roofline.suites.gemm.ladder import ladder_warnings

GIB = 1 << 30


def _gemm(n: int, seconds: float, dtype: str = "fp32") -> Measurement:
    return Measurement(
        suite="gemm",
        kernel="sgemm",
        dtype=dtype,
        params={"m": n, "n": n, "k": n},
        flops=2 * n**3,
        bytes=12 * n * n,
        samples_s=(seconds,) * 10,
        valid=True,
    )


def test_default_array_bytes_follows_the_cache_and_memory() -> None:
    assert default_array_bytes({"backend": "cpu", "llc_bytes": 32 << 20, "memory_bytes": 24 * GIB}) == 256 << 20
    assert default_array_bytes({"backend": "cpu", "llc_bytes": 300 << 20, "memory_bytes": 128 * GIB}) == 1200 << 20
    assert default_array_bytes({"backend": "cuda", "memory_bytes": 80 * GIB}) == 256 << 20
    small = default_array_bytes({"backend": "cpu", "llc_bytes": 300 << 20, "memory_bytes": 1 * GIB})
    assert 3 * small <= GIB // 2  # capped so three arrays take at most half the memory


def test_array_bytes_limit_names_the_range() -> None:
    info = {"backend": "cpu", "name": "X", "memory_bytes": 6 * GIB}
    check_array_bytes(GIB, info)
    with pytest.raises(ValueError, match=r"valid: 4 KiB to 1 GiB"):
        check_array_bytes(2 * GIB, info)
    with pytest.raises(ValueError, match="out of range"):
        check_array_bytes(100, info)


def test_gemm_ladder_flags_a_collapsed_size() -> None:
    ms = [_gemm(128, 2e-5), _gemm(256, 1e-2), _gemm(512, 1e-3)]  # 256 ran ~60x below 128
    warnings = ladder_warnings(ms)
    assert len(warnings) == 1 and "m=256" in warnings[0] and "disturbed" in warnings[0]
    assert ladder_warnings([_gemm(128, 2e-5), _gemm(256, 1.6e-4)]) == []  # same rate: fine


def test_finished_timestamp_round_trips() -> None:
    run = Run(
        tool=ToolInfo("apple_roofline", "0", None),
        created="2026-01-01T00:00:00+00:00",
        host={},
        device={"backend": "cpu", "name": "x"},
        command=(),
        measurements=(),
        ceilings=(),
        finished="2026-01-01T00:01:00+00:00",
    )
    again = Run.from_json(run.to_json())
    assert again.finished == "2026-01-01T00:01:00+00:00"
    import dataclasses

    unfinished = dataclasses.replace(run, finished=None)
    assert "finished" not in unfinished.to_dict()  # optional key: files from before it still load
    assert Run.from_json(unfinished.to_json()).finished is None


def test_gemm_ladder_compares_each_kernel_with_itself() -> None:
    """The tiled kernel's first size follows the library's largest: a new ladder, not a collapse."""
    library = [_gemm(4096, 2.0)]
    tiled = Measurement(
        suite="gemm",
        kernel="sgemm_tiled16",
        dtype="fp32",
        params={"m": 16, "n": 16, "k": 16},
        flops=2 * 16**3,
        bytes=12 * 16 * 16,
        samples_s=(1e-5,) * 10,
        valid=True,
    )
    assert ladder_warnings(library + [tiled]) == []
