"""The suites' registry (docs/design/extending.md, "Adding a suite"): every folder of suites/ is found, in run
order, and a folder that is no suite is named in a clear error. The folders a test adds live in a
temporary directory put on the suites package's path; the registry forgets them afterwards."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

import apple_roofline.suites as suites_package
from apple_roofline.study.records import Measurement
from apple_roofline.suites import SuiteContext, registry

MINIMAL_SPEC = """
from ..base import Suite
from ..registry import SuiteSpec


class Nothing(Suite):
    name = "{name}"

    def total(self):
        return 0

    def cases(self):
        return iter(())


SPEC = SuiteSpec(name="{spec_name}", measure=Nothing, order={order}, budget_s=5.0)
"""


@pytest.fixture
def extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(suites_package, "__path__", [*suites_package.__path__, str(tmp_path)])
    registry.refresh()
    yield tmp_path
    registry.refresh()
    for name in [m for m in sys.modules if m.startswith("apple_roofline.suites.") and m.split(".")[2].startswith("x")]:
        del sys.modules[name]


def _folder(root: Path, name: str, spec: str = "") -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("", encoding="utf-8")
    if spec:
        (root / name / "spec.py").write_text(spec, encoding="utf-8")


def test_every_folder_is_a_suite_in_run_order() -> None:
    names = registry.suite_names()
    package = Path(suites_package.__file__).parent
    assert set(names) == {p.parent.name for p in package.glob("*/spec.py")}, "a suite per folder, each found"
    orders = [s.order for s in registry.specs()]
    assert orders == sorted(orders) and set(registry.default_suites()) < set(names)
    assert list(registry.budgets_s()) == list(names) and all(b > 0 for b in registry.budgets_s().values())
    assert [s.title for _spec, s in registry.sections()] == [
        s.title for s in sorted((sec for spec in registry.specs() for sec in spec.sections), key=lambda sec: sec.order)
    ]


def test_a_folder_added_to_the_path_is_found_in_its_order(extra: Path) -> None:
    _folder(extra, "xfirst", MINIMAL_SPEC.format(name="xfirst", spec_name="xfirst", order=1))
    _folder(extra, "xlast", MINIMAL_SPEC.format(name="xlast", spec_name="xlast", order=10**6))
    names = registry.suite_names()
    assert names[0] == "xfirst" and names[-1] == "xlast"
    assert registry.spec("xlast").budget_s == 5.0 and "xlast" not in registry.default_suites()
    with pytest.raises(KeyError, match="no suite 'nope' \\(suites: xfirst, stream"):
        registry.spec("nope")


@pytest.mark.parametrize(
    "spec,error,match",
    [
        ("", ImportError, "suites/xbad/ has no spec.py"),
        ("SPEC = 3\n", TypeError, "xbad.spec defines no SPEC"),
        (
            MINIMAL_SPEC.format(name="xbad", spec_name="other", order=5),
            ValueError,
            "SPEC.name 'other' differs from its folder 'xbad'",
        ),
    ],
)
def test_a_folder_that_is_no_suite_is_named(extra: Path, spec: str, error: type, match: str) -> None:
    _folder(extra, "xbad", spec)
    with pytest.raises(error, match=match):
        registry.specs()


def test_the_sizing_warnings_are_the_suites_own(make_m: Callable[..., Measurement]) -> None:
    """STREAM's arrays that fit in the last-level cache and the sweep's shrunk points are warned about
    by their suites' SPEC (the runner names no suite), STREAM's first (run order)."""
    ctx = SuiteContext(None, "cpu", {"llc_bytes": 32 << 20}, False, 64 << 20)
    dram = make_m(
        "stream",
        "triad",
        "fp32",
        flops=1,
        bytes=10**9,
        gbps=100.0,
        ceiling_class="DRAM bandwidth",
        ceiling_kind="bandwidth",
    )
    assert registry.sizing_warnings([dram], ctx) == []
    cache = dataclasses.replace(dram, ceiling_class="Cache bandwidth")
    shrunk = make_m("sweep", "vec4", "fp32", flops=10**9, bytes=10**6, gflops=100.0, params={"shrunk": True})
    assert registry.sizing_warnings([shrunk, cache], ctx) == [
        "STREAM arrays of 64 MiB are smaller than 4x the last-level cache (32 MiB): the bandwidth ceiling "
        "measures caches, not DRAM",
        "sweep points marked shrunk ran on a smaller working set once the kernel was compute-bound",
    ]


def test_how_a_suite_s_points_are_drawn_is_its_own(make_m: Callable[..., Measurement]) -> None:
    """The sweep's points lie on curves, gemm's tiled kernel (no ceiling) is drawn beside its dtype's vendor
    GEMM and its vendor GEMMs in their class's colour; a suite not registered has none of these."""
    assert registry.curves("sweep") and not registry.curves("peak") and not registry.curves("nope")
    tiled = make_m("gemm", "tiled", "fp16", flops=10**9, bytes=10**6, gflops=100.0)
    assert registry.compare_class(tiled) == "GEMM FP16"
    assert registry.compare_class(dataclasses.replace(tiled, ceiling_class="GEMM FP16", ceiling_kind="compute")) is None
    assert registry.compare_class(dataclasses.replace(tiled, suite="nope")) is None
    marker = registry.point_marker("gemm")
    assert marker is not None and marker.by_class and marker.not_drawn
