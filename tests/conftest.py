"""Shared test fixtures: which backends have a device here (the backend tier runs on each)."""

from __future__ import annotations

from typing import List

import pytest


def _available_backends() -> List[str]:
    try:
        from apple_roofline._native import _core
    except ImportError:
        return []
    return [str(b["name"]) for b in _core.backends() if b["compiled"] and int(b["devices"]) > 0]


AVAILABLE = _available_backends()


@pytest.fixture(params=AVAILABLE or [pytest.param("none", marks=pytest.mark.skip(reason="native extension not importable"))])
def backend(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """An opened ``_core.Backend`` of every backend that has a device on this machine (CPU always)."""
    from apple_roofline._native import _core

    return _core.Backend(request.param, 0)
