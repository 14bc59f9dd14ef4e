"""The package's structure: no import cycles between modules, no private name used across modules.

Every ``from X import Y`` of the package (at any depth, inside functions too) is an edge from the
importing module to the module it names; a package's ``__init__`` re-exports are not followed (they
are the public face, not a dependency). A name starting with one underscore imported from another
module is a private name crossing a module boundary (``_core``, the extension, is the exception).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "apple_roofline"


def _modules() -> Dict[str, Path]:
    out: Dict[str, Path] = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _imports(modules: Dict[str, Path]) -> Tuple[Dict[str, Set[str]], List[str]]:
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    private: List[str] = []
    for m, p in modules.items():
        base = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = base[: len(base) - node.level + 1]
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("apple_roofline"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                dst = full if full in modules else target
                if dst in modules and dst != m:
                    graph[m].add(dst)
                if alias.name.startswith("_") and not alias.name.startswith("__") and alias.name != "_core":
                    private.append(f"{m} imports {target}.{alias.name}")
    return graph, private


def _cycles(graph: Dict[str, Set[str]], inits: Set[str]) -> List[List[str]]:
    cycles: List[List[str]] = []
    seen: Set[str] = set()

    def visit(u: str, path: List[str]) -> None:
        seen.add(u)
        path.append(u)
        for v in sorted(graph[u]):
            if v in inits:
                continue
            if v in path:
                cycles.append(path[path.index(v):] + [v])
            elif v not in seen:
                visit(v, path)
        path.pop()

    for m in sorted(graph):
        if m not in seen and m not in inits:
            visit(m, [])
    return cycles


def test_the_checker_finds_a_cycle_and_a_private_import(tmp_path: Path) -> None:
    graph = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert _cycles(graph, set()) == [["a", "b", "a"]]
    assert _cycles({"a": {"p"}, "p": {"a"}}, {"p"}) == []  # re-exports through an __init__ are not edges


def test_no_import_cycles() -> None:
    modules = _modules()
    assert "apple_roofline.roofline.model" in modules and "apple_roofline.study.document" in modules
    graph, _private = _imports(modules)
    inits = {m for m, p in modules.items() if p.name == "__init__.py"}
    cycles = _cycles(graph, inits)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_no_private_names_across_modules() -> None:
    _graph, private = _imports(_modules())
    assert not private, "\n".join(private)


@pytest.mark.parametrize("view", ["plot", "compare_plot", "sweep_plot", "report", "html", "tables", "labels"])
def test_the_model_never_imports_a_view(view: str) -> None:
    graph, _private = _imports(_modules())
    for model in ("apple_roofline.roofline.model", "apple_roofline.roofline.records", "apple_roofline.roofline.run"):
        assert f"apple_roofline.roofline.{view}" not in graph[model], f"{model} imports a view"
