"""Every cross-reference in the package's docstrings and comments names something that exists: a
``:mod:``, ``:func:``, ``:class:``, ``:data:``, ``:meth:``, ``:attr:`` or ``:exc:`` target written
absolutely (``apple_roofline.timing.measure.time_kernel``) or, in Sphinx's way, as a dotted suffix
(``.records.Measurement.usable``: some module ending in ``.records`` defines ``Measurement``). A
module moved or a name renamed leaves no reference pointing at where it was."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python"
REFERENCE = re.compile(r":(?:mod|func|class|data|meth|attr|exc):`~?([.\w]+)`")


def _modules() -> Dict[str, str]:
    """Dotted module name -> source text, for every module of the package."""
    out: Dict[str, str] = {}
    for path in sorted((PACKAGE / "apple_roofline").rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def _defines(source: str, name: str) -> bool:
    """Whether ``source`` defines or imports ``name`` (a def, a class, an assignment or annotated
    field at any indent, an attribute set on ``self``, or an imported name)."""
    n = re.escape(name)
    pattern = "|".join(
        (
            rf"^\s*(?:async\s+)?(?:def|class)\s+{n}\b",
            rf"^\s*{n}\s*[:=]",
            rf"\bself\.{n}\s*[:=]",
            rf"^\s*from\s+\S+\s+import\s+[^#\n]*\b{n}\b",
        )
    )
    return re.search(pattern, source, re.M) is not None or re.search(rf"import\s*\([^)]*\b{n}\b", source) is not None


def resolves(reference: str, modules: Dict[str, str]) -> bool:
    """Whether ``reference`` names a module of ``modules`` or a name one of them defines: exactly
    when it is absolute, else as a dotted suffix (Sphinx's leading-dot search)."""
    suffix = reference.startswith(".")
    parts = reference.lstrip(".").split(".")
    for i in range(len(parts), 0, -1):
        head, rest = ".".join(parts[:i]), parts[i:]
        candidates = [m for m in modules if m == head or (suffix and m.endswith("." + head))]
        if any(not rest or _defines(modules[m], rest[0]) for m in candidates):
            return True
    return False


def test_the_resolver_tells_a_live_reference_from_a_stale_one() -> None:
    modules = {"p.a.records": "class Ceiling:\n    noisy: bool\n", "p.b": "from .a.records import Ceiling\n"}
    assert resolves(".records.Ceiling", modules)
    assert resolves("p.a.records.Ceiling", modules)
    assert resolves("p.b.Ceiling", modules)  # a re-export
    assert not resolves(".records.Level", modules)
    assert not resolves(".steady", modules)
    assert not resolves("p.records.Ceiling", modules)  # absolute: no suffix search


def test_every_docstring_reference_resolves() -> None:
    modules = _modules()
    stale: List[str] = []
    for name, source in modules.items():
        for match in REFERENCE.finditer(source):
            ref = match.group(1)
            if not (ref.startswith(".") or ref.startswith("apple_roofline")):
                continue  # a name of the module itself, or of another library
            if not resolves(ref, modules):
                line = source.count("\n", 0, match.start()) + 1
                stale.append(f"{name.replace('.', '/')}.py:{line} {match.group(0)}")
    assert not stale, "references to nothing (moved or renamed?):\n" + "\n".join(stale)
