"""Shared test fixtures and the tiers: each test gets the marker of its directory (unit, native,
backend, device, toolchain, typecheck; docs/design/testing.md, "Tests"), so ``pytest -m unit`` runs one tier."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List

import pytest

TIERS = ("unit", "native", "backend", "device", "toolchain", "typecheck")
_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Mark every test with its tier: the first directory under tests/."""
    for item in items:
        try:
            tier = Path(str(item.fspath)).resolve().relative_to(_HERE).parts[0]
        except ValueError:
            continue
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


def _available_backends() -> List[str]:
    try:
        from apple_roofline._native import _core
    except ImportError:
        return []
    return [str(b["name"]) for b in _core.backends() if b["compiled"] and int(b["devices"]) > 0]


def _params(names: List[str]) -> List[object]:
    """One parameter per backend; Metal's skipped with the reason when its device is below the
    Apple7 family (every Apple-silicon Mac's GPU is Apple7 or newer; a virtual machine's
    paravirtual GPU, as on GitHub's hosted macOS runners, is not the hardware measured)."""
    out: List[object] = []
    for name in names:
        if name == "metal":
            from apple_roofline._native import _core

            info = _core.Backend("metal", 0).info()
            if int(info.get("gpu_family_raw", 0)) < 1007:
                why = f"Metal device {info['name']!r} is below the Apple7 family (not an Apple-silicon GPU)"
                out.append(pytest.param(name, marks=pytest.mark.skip(reason=why)))
                continue
        out.append(name)
    return out


AVAILABLE = _available_backends()


@pytest.fixture(
    scope="session",
    params=_params(AVAILABLE)
    or [pytest.param("none", marks=pytest.mark.skip(reason="native extension not importable"))],
)
def backend(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """An opened ``_core.Backend`` of every backend that has a device on this machine (CPU always),
    one per backend for the whole session: its compiled-kernel cache is shared by every test (on a
    GPU the NVRTC compiles, not the kernels, are most of the tier's time), so a test must leave the
    backend as it found it (no kernels left running, buffers it owns only)."""
    from apple_roofline._native import _core

    return _core.Backend(request.param, 0)


@pytest.fixture
def resume_check(tmp_path: Any) -> Callable[..., Any]:
    """``check(stem, kind, study, records, measured)``: run ``study(journal)`` with a new journal, cut
    the journal back to its header and the first half of its records (a study killed half way), run
    it again resuming from that, and check that exactly the missing half was measured (``measured()``
    counts the measurements made), the journal ends with every key once, and the result says which
    were kept (docs/design/files.md, "Journal and resume"). Returns the resumed study."""
    from apple_roofline.study.journal import Journal, journal_path, read_journal
    from journal_lines import assert_each_key_once

    def check(
        stem: str,
        kind: Any,
        study: Callable[[Journal], Any],
        records: Callable[[Any], Any],
        measured: Callable[[], int],
    ) -> Any:
        path = journal_path(tmp_path, stem)
        first = study(Journal(path))
        keys = assert_each_key_once(path)
        assert list(read_journal(path, kind).records) == keys
        assert first.resumed is None and len(keys) == len(records(first)) >= 2
        half = len(keys) // 2
        path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[: 1 + half]))
        before = measured()
        second = study(Journal(resume=read_journal(path, kind)))
        assert measured() - before == len(keys) - half
        again = assert_each_key_once(path)  # the file's own lines: the reader would merge a key written twice
        assert sorted(again) == sorted(keys) and again[:half] == keys[:half]
        assert sorted(second.resumed["measurements"]) == sorted(keys[:half])
        assert second.resumed["device"] == {"backend": first.backend, "name": first.device_name}
        assert len(records(second)) == len(records(first)) and second.complete
        return second

    return check
