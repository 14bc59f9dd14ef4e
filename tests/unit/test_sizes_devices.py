"""Argument parsing: byte sizes, device strings and suite lists (property-based where it counts)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from apple_roofline.devices import parse_device
from apple_roofline.roofline.run.options import parse_suites
from apple_roofline.sizes import MAX_BYTES, format_size, parse_size
from apple_roofline.suites.registry import suite_names

SUITES = suite_names()


@pytest.mark.parametrize(
    "text,want",
    [
        ("4096", 4096),
        ("256MiB", 256 << 20),
        ("1GiB", 1 << 30),
        ("512MB", 512_000_000),
        ("64 KiB", 65536),
        ("1.5GiB", 3 << 29),
        ("2e3", 2000),
        ("7b", 7),
        ("3kB", 3000),
    ],
)
def test_parse_size_examples(text: str, want: int) -> None:
    assert parse_size(text) == want


@pytest.mark.parametrize(
    "text", ["", "lots", "-5MiB", "0", "0.1", "12 parsecs", "1e400GiB", "9EiB", "8e18GB", "MiB", "nan", "inf"]
)
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_size(text)
    assert "valid" in str(err.value)


@given(st.integers(min_value=1, max_value=1 << 50), st.sampled_from(["", "B", "KiB", "MiB", "GiB", "kB", "MB", "GB"]))
def test_parse_size_scales(n: int, unit: str) -> None:
    scale = {"": 1, "B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30, "kB": 1000, "MB": 10**6, "GB": 10**9}[unit]
    assume(n * scale <= MAX_BYTES)
    assert parse_size(f"{n}{unit}") == n * scale


@given(st.integers(min_value=1, max_value=1 << 45))
def test_format_size_round_trips_within_rounding(n: int) -> None:
    back = parse_size(format_size(n).replace(" ", ""))
    assert abs(back - n) <= 0.05 * n + 1


@given(st.sampled_from(["cpu", "cuda", "metal"]), st.integers(min_value=0, max_value=10**6))
def test_parse_device_round_trip(backend: str, index: int) -> None:
    assert parse_device(f"{backend}:{index}") == (backend, index)
    assert parse_device(backend) == (backend, 0)


@given(st.text(max_size=12))
def test_parse_device_never_crashes(text: str) -> None:
    try:
        backend, index = parse_device(text)
    except ValueError as exc:
        assert "valid: cpu, cuda:N, metal:N" in str(exc)
    else:
        assert backend in ("cpu", "cuda", "metal") and index >= 0


@pytest.mark.parametrize("spec", ["gpu", "cuda:-1", "cuda:x", "metal:0:1", ""])
def test_parse_device_rejects(spec: str) -> None:
    with pytest.raises(ValueError, match="is not a device"):
        parse_device(spec)


@given(st.lists(st.sampled_from(list(SUITES)), min_size=1))
def test_parse_suites_orders_and_dedups(names: list) -> None:  # type: ignore[type-arg]
    got = parse_suites(",".join(names))
    assert set(got) == set(names) and list(got) == [s for s in SUITES if s in names]


@pytest.mark.parametrize("text", ["stream,foo", "", ",", "STREAMS"])
def test_parse_suites_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="valid: stream, sweep, peak, gemm"):
        parse_suites(text)
