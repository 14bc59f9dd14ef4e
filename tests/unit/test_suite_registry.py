"""The suites' registry (docs/design/extending.md, "Adding a suite"): every folder of suites/ is found, in run
order, and a folder that is no suite is named in a clear error. The folders a test adds live in a
temporary directory put on the suites package's path; the registry forgets them afterwards."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

import apple_roofline.suites as suites_package
from apple_roofline.suites import registry

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
