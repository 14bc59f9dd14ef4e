"""Fixtures of the backend tier: kernels compiled ahead, on threads, for the tests that build them one by one."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import pytest

CompileAhead = Callable[[Iterable[Callable[[], Any]]], int]


def _compile_ahead(makers: Iterable[Callable[[], Any]]) -> int:
    """Call every kernel maker of ``makers`` (a case's ``make_kernel``) on up to the suites' prebuild
    threads; the number that built. A maker that raises is left for its test to meet and report."""
    from concurrent.futures import ThreadPoolExecutor

    from apple_roofline.host.cpus import host_threads
    from apple_roofline.suites.base import PREBUILD_WORKERS

    todo = list(makers)

    def build(make: Callable[[], Any]) -> bool:
        try:
            make()
        except Exception:  # noqa: BLE001 — the test that builds this kernel meets the error (docstring)
            return False
        return True

    if not todo:
        return 0
    with ThreadPoolExecutor(max_workers=max(1, min(PREBUILD_WORKERS, host_threads(), len(todo)))) as pool:
        return sum(pool.map(build, todo))


@pytest.fixture(scope="session")
def compile_ahead() -> CompileAhead:
    """``compile_ahead(makers)``: build every kernel of ``makers`` (the ``make_kernel`` of cases made
    as the tests make theirs) on threads, as the suites' :func:`~apple_roofline.suites.base.prebuild`
    does, and return how many built. ``Backend.compile`` releases the GIL and keeps each kernel by
    source, entry and constants for the backend's life (the session's ``backend``), so each
    parametrized test's own ``make_kernel()`` then finds its kernel built: on CUDA a file's NVRTC
    programs compile in parallel instead of one per test. Nothing is timed or checked here."""
    return _compile_ahead
