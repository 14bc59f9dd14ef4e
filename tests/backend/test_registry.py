"""The registry and device selection, on whatever this build has."""

from __future__ import annotations

import pytest

_core = pytest.importorskip("apple_roofline._native")._core


def test_backends_lists_all_three_with_reasons() -> None:
    rows = {b["name"]: b for b in _core.backends()}
    assert set(rows) == {"cpu", "cuda", "metal"}
    assert rows["cpu"]["compiled"] and rows["cpu"]["devices"] == 1
    for b in rows.values():
        if not b["compiled"] or b["devices"] == 0:
            assert b["reason"], b


def test_open_errors() -> None:
    with pytest.raises(ValueError, match="unknown backend"):
        _core.Backend("tpu")
    with pytest.raises(ValueError, match="negative"):
        _core.Backend("cpu", -1)
    with pytest.raises(_core.DeviceError, match="no device 3"):
        _core.Backend("cpu", 3)
    for name in ("cuda", "metal"):
        row = next(b for b in _core.backends() if b["name"] == name)
        if not row["compiled"]:
            with pytest.raises(_core.UnsupportedError, match="not built"):
                _core.Backend(name)
        elif row["devices"] == 0:
            with pytest.raises(_core.DeviceError):
                _core.Backend(name)


def test_exception_hierarchy() -> None:
    assert issubclass(_core.BackendError, RuntimeError)
    for e in (_core.DeviceError, _core.CompileError, _core.UnsupportedError):
        assert issubclass(e, _core.BackendError)
    assert _core.CompileError.log == ""


def test_cpu_info_and_features() -> None:
    info = _core.Backend("cpu").info()
    for key in ("backend", "name", "threads", "isa", "vector_bits", "memory_bytes", "blas"):
        assert key in info
    assert info["backend"] == "cpu" and info["threads"] >= 1 and info["vector_bits"] in (128, 256, 512)
    f = _core.cpu_features()
    assert f["isa_mismatch"] == "" and f["threads"] == info["threads"]


def test_clock_measurement() -> None:
    hz = _core.measure_cpu_clock_hz(0.02)
    assert 0 < hz < 7e9  # no core runs above ~6.5 GHz: more means the chain was not 1 add/cycle
    with pytest.raises(ValueError, match="out of range"):
        _core.measure_cpu_clock_hz(0.0)
