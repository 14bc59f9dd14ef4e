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
from typing import Dict, FrozenSet, Iterator, List, Sequence, Set, Tuple

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
    assert "apple_roofline.roofline.model.model" in modules and "apple_roofline.study.document" in modules
    graph, _private = _imports(modules)
    inits = {m for m, p in modules.items() if p.name == "__init__.py"}
    cycles = _cycles(graph, inits)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_no_private_names_across_modules() -> None:
    _graph, private = _imports(_modules())
    assert not private, "\n".join(private)


VIEWS = (
    "apple_roofline.roofline.views.plot",
    "apple_roofline.roofline.compare.compare_plot",
    "apple_roofline.suites.sweep.plot",
    "apple_roofline.roofline.views.report",
    "apple_roofline.roofline.views.html",
    "apple_roofline.roofline.views.tables",
    "apple_roofline.roofline.views.labels",
    "apple_roofline.roofline.views.axes",
    "apple_roofline.roofline.views.outputs",
    "apple_roofline.roofline.views.interactive",
    "apple_roofline.roofline.compare.compare_interactive",
    "apple_roofline.roofline.compare.compare_html",
    "apple_roofline.roofline.views.plotly_embed",
)
MODELS = (
    "apple_roofline.roofline.model.model",
    "apple_roofline.study.records",
    "apple_roofline.roofline.model.run",
    "apple_roofline.roofline.model.selection",
    "apple_roofline.roofline.model.facade",
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
    views = set(VIEWS) | {"apple_roofline.figures"}
    assert views <= set(modules)
    # each suite folder's report table and figure (suites/<name>/table.py, plot.py): the model asks the
    # registry, which loads the suites only when first asked
    suite_views = {
        m for m in modules if m.startswith("apple_roofline.suites.") and m.rsplit(".", 1)[1] in ("table", "plot")
    }
    assert "apple_roofline.suites.hierarchy.plot" in suite_views
    views |= suite_views
    assert not reached & views, f"{name} reaches the views {sorted(reached & views)}"


def _folder(module: str) -> str:
    """The folder a module is in; a loose module of the package root is a unit of its own."""
    return module if module.count(".") == 1 else module.rsplit(".", 1)[0]


def _folder_graph(graph: Dict[str, Set[str]], inits: Set[str]) -> Dict[str, Set[str]]:
    """The edges folder -> folder it imports from: every import of :func:`_imports` between two
    modules of different folders, ``__init__`` re-exports aside."""
    out: Dict[str, Set[str]] = {}
    for m, targets in graph.items():
        if m in inits:
            continue
        out.setdefault(_folder(m), set())
        for t in targets - inits:
            if _folder(t) != _folder(m):
                out[_folder(m)].add(_folder(t))
                out.setdefault(_folder(t), set())
    return out


def _loops(graph: Dict[str, Set[str]]) -> Set[FrozenSet[str]]:
    """The sets of nodes that reach each other through ``graph`` (its strongly connected
    components of more than one node)."""
    reach = {u: _reached(graph, u, set()) for u in graph}
    return {frozenset({u} | {v for v in reach[u] if u in reach[v]}) for u in graph if u in reach[u]}


#: The layers, lowest first: a folder imports only from its own layer or one below. ``suites/``
#: itself (the registry, the suite base) is below the model; a suite's folder, ``suites/<name>/``,
#: is above the roofline's views, which its table and figure use (the views reach a suite's only
#: through the registry, when first asked).
LAYERS: Tuple[str, ...] = (
    "apple_roofline.study",
    "apple_roofline.suites",
    "apple_roofline.roofline.model",
    "apple_roofline.roofline.run",
    "apple_roofline.roofline.views",
    "apple_roofline.suites.*",
    "apple_roofline.roofline.compare",
)

#: Folder loops tolerated, each with the imports that close it: none. The test fails on any other
#: loop and on a listed loop that is gone, so this list can only shrink.
KNOWN_LOOPS: Dict[FrozenSet[str], str] = {}

#: Back arrows tolerated, (lower folder, higher folder) -> the imports: none.
KNOWN_BACK: Dict[Tuple[str, str], str] = {}


def _suite_names_compared(tree: ast.AST) -> List[str]:
    """The string constants a ``<x>.suite`` is compared with in ``tree`` (``m.suite == "sweep"``,
    ``m.suite in ("sweep", "peak")``)."""
    out: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(x, ast.Attribute) and x.attr == "suite" for x in sides):
            continue
        for x in sides:
            consts = x.elts if isinstance(x, (ast.Tuple, ast.List, ast.Set)) else [x]
            out += [c.value for c in consts if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return out


def test_the_roofline_names_no_suite() -> None:
    """The roofline's model, run and views ask the suites' registry how a suite's measurements are
    drawn, judged and warned about, and never compare a measurement's suite with a suite's name."""
    assert _suite_names_compared(ast.parse('a = m.suite == "sweep" or x.suite in ("gemm", y)')) == ["sweep", "gemm"]
    found = {
        f"{m}: {name}"
        for m, p in _modules().items()
        if m.startswith("apple_roofline.roofline.")
        for name in _suite_names_compared(ast.parse(p.read_text(encoding="utf-8")))
    }
    assert not found, "suite names in the roofline: " + "; ".join(sorted(found))


def test_the_folder_checks_find_a_loop_and_a_back_arrow() -> None:
    graph = {"p.a.x": {"p.b.y"}, "p.b.y": {"p.a.z"}, "p.a.z": set(), "p.c.w": {"p.a.x"}}
    folders = _folder_graph(graph, set())
    assert folders == {"p.a": {"p.b"}, "p.b": {"p.a"}, "p.c": {"p.a"}}
    assert _loops(folders) == {frozenset({"p.a", "p.b"})}
    assert _loops({"p.a": {"p.b"}, "p.b": set()}) == set()
    assert _back_arrows({"p.a": {"p.b"}, "p.b": set()}, ("p.b", "p.a")) == set()
    assert _back_arrows({"p.a": {"p.b"}, "p.b": set()}, ("p.a", "p.b")) == {("p.a", "p.b")}
    assert _layer("p.s", ("p.s", "p.v", "p.s.*")) == 0 and _layer("p.s.x", ("p.s", "p.v", "p.s.*")) == 2


def _layer(folder: str, layers: Sequence[str]) -> int:
    """The index in ``layers`` of the most specific entry ``folder`` is in, -1 if none: an entry is a
    folder and the folders in it, or with ``.*`` only the folders in it."""
    found = [
        (len(layer), i)
        for i, layer in enumerate(layers)
        if (
            folder.startswith(layer[:-1]) if layer.endswith(".*") else folder == layer or folder.startswith(layer + ".")
        )
    ]
    return max(found)[1] if found else -1


def _back_arrows(folders: Dict[str, Set[str]], layers: Sequence[str]) -> Set[Tuple[str, str]]:
    """The edges of ``folders`` from a folder of a lower layer up to one of a higher layer."""
    out: Set[Tuple[str, str]] = set()
    for u, targets in folders.items():
        for v in targets:
            lu, lv = _layer(u, layers), _layer(v, layers)
            if lu >= 0 and lv >= 0 and lv > lu:
                out.add((u, v))
    return out


def test_no_two_folders_import_each_other() -> None:
    """No folder imports one that imports it back, directly or through other folders."""
    modules = _modules()
    graph, _private = _imports(modules)
    inits = {m for m, p in modules.items() if p.name == "__init__.py"}
    loops = _loops(_folder_graph(graph, inits))
    new = sorted(sorted(loop) for loop in loops - set(KNOWN_LOOPS))
    gone = sorted(sorted(loop) for loop in set(KNOWN_LOOPS) - loops)
    assert not new, "folders importing each other: " + "; ".join(" <-> ".join(loop) for loop in new)
    assert not gone, "no longer a loop, remove from KNOWN_LOOPS: " + "; ".join(" <-> ".join(x) for x in gone)


def test_no_back_arrows() -> None:
    """No folder of a lower layer (:data:`LAYERS`) imports one of a higher layer."""
    modules = _modules()
    graph, _private = _imports(modules)
    inits = {m for m, p in modules.items() if p.name == "__init__.py"}
    back = _back_arrows(_folder_graph(graph, inits), LAYERS)
    new = sorted(back - set(KNOWN_BACK))
    gone = sorted(set(KNOWN_BACK) - back)
    assert not new, "imports from a lower layer up: " + "; ".join(f"{u} -> {v}" for u, v in new)
    assert not gone, "no longer a back arrow, remove from KNOWN_BACK: " + "; ".join(f"{u} -> {v}" for u, v in gone)
