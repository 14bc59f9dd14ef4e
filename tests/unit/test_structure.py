"""The package's structure: no import cycles between modules, no private name used across modules.

Every ``from X import Y`` of the package (at any depth, inside functions too) is an edge from the
importing module to the module it names; a package's ``__init__`` re-exports are not followed (they
are the public face, not a dependency). A name starting with one underscore imported from another
module is a private name crossing a module boundary (``_core``, the extension, is the exception).
The model modules must not reach a view through the imports a module runs when it is imported
(its module-level ones, not those inside functions or under ``if TYPE_CHECKING``), directly or
through other modules.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "apple_roofline"


def _modules() -> Dict[str, Path]:
    out: Dict[str, Path] = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _load_time(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` that run when the module is imported: not the bodies of functions,
    lambdas or ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_load_time(child)])
            continue
        yield node
        yield from _load_time(node)


def _imports(modules: Dict[str, Path], *, load_time: bool = False) -> Tuple[Dict[str, Set[str]], List[str]]:
    """``(graph, private)``: the edges module -> module it imports from (every import, or with
    ``load_time`` only those :func:`_load_time` runs), and the private names imported across modules."""
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    private: List[str] = []
    for m, p in modules.items():
        base = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in _load_time(tree) if load_time else ast.walk(tree):
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
                cycles.append(path[path.index(v) :] + [v])
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


VIEWS = (
    "plot",
    "compare_plot",
    "sweep_plot",
    "report",
    "html",
    "tables",
    "labels",
    "axes",
    "outputs",
    "interactive",
    "compare_interactive",
    "compare_html",
    "plotly_embed",
)
MODELS = (
    "apple_roofline.roofline.model",
    "apple_roofline.study.records",
    "apple_roofline.roofline.run",
    "apple_roofline.roofline.selection",
    "apple_roofline.roofline.facade",
)


def _reached(graph: Dict[str, Set[str]], start: str, skip: Set[str]) -> Set[str]:
    """Every module ``start`` reaches through ``graph``, not passing through ``skip``."""
    seen: Set[str] = set()
    todo = [start]
    while todo:
        for v in graph[todo.pop()] - seen - skip:
            seen.add(v)
            todo.append(v)
    return seen


def test_reached_follows_edges_transitively() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "p": {"c"}, "d": {"p"}}
    assert _reached(graph, "a", set()) == {"b", "c"}
    assert _reached(graph, "d", {"p"}) == set()
    tree = ast.parse(
        "import x\nif TYPE_CHECKING:\n    from a import b\ndef f():\n    from c import d\n"
        "class K:\n    from e import g\n"
    )
    found = {n.module for n in _load_time(tree) if isinstance(n, ast.ImportFrom)}
    assert found == {"e"}


@pytest.mark.parametrize("model", MODELS)
def test_the_model_never_imports_a_view(model: str) -> None:
    """Neither directly nor through other modules, when it is imported (``__init__`` re-exports aside)."""
    modules = _modules()
    graph, _private = _imports(modules, load_time=True)
    inits = {m for m, p in modules.items() if p.name == "__init__.py"}
    name = model
    reached = _reached(graph, name, inits)
    views = {f"apple_roofline.roofline.{v}" for v in VIEWS} | {"apple_roofline.figures"}
    assert views <= set(modules)
    # each suite folder's report table and figure (suites/<name>/table.py, plot.py): the model asks the
    # registry, which loads the suites only when first asked
    suite_views = {
        m for m in modules if m.startswith("apple_roofline.suites.") and m.rsplit(".", 1)[1] in ("table", "plot")
    }
    assert "apple_roofline.suites.hierarchy.plot" in suite_views
    views |= suite_views
    assert not reached & views, f"{name} reaches the views {sorted(reached & views)}"
