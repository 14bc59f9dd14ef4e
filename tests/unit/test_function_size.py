"""No function or method of the repository's Python is longer than MAX_LINES lines of code.

The rule is the code standard's (small functions with one job each; a long one becomes named steps).
A function's length is its body's lines from its first statement after the docstring to its last
line, less blank lines and lines holding only a comment; a nested function counts in its parent too.
Every ``.py`` and ``.pyi`` file under PYTHON_PATHS is read with :mod:`ast`, except GENERATED (written by
a tool, compared byte for byte with its output elsewhere). Tables of literal data are not functions,
so they need no exemption.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple, Union

ROOT = Path(__file__).resolve().parents[2]
#: The folders walked (those ruff checks, tests/toolchain/test_style.py).
PYTHON_PATHS = ("python", "tests", "bench", "examples", "tools")
#: Files written by a tool, relative to ROOT: the extension's stub (nanobind.stubgen, tools/gen-stubs.py).
GENERATED = frozenset({"python/apple_roofline/_core.pyi"})
#: The most lines of code a function's body may have.
MAX_LINES = 60

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def python_files(root: Path = ROOT) -> List[Path]:
    """The ``.py`` and ``.pyi`` files under PYTHON_PATHS of root, GENERATED and ``__pycache__`` left
    out, sorted."""
    found = [p for folder in PYTHON_PATHS for suffix in ("*.py", "*.pyi") for p in (root / folder).rglob(suffix)]
    return sorted(
        p
        for p in found
        if p.is_file() and "__pycache__" not in p.parts and p.relative_to(root).as_posix() not in GENERATED
    )


def _has_docstring(fn: Function) -> bool:
    first = fn.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def code_lines(fn: Function, lines: Sequence[str]) -> int:
    """The lines of code in fn's body (``lines``: its file's lines): from its first statement after
    the docstring (its decorators, where it has any) to fn's last line, blank lines and lines holding
    only a comment not counted. 0 for a body that is only a docstring."""
    body = fn.body[1:] if _has_docstring(fn) else fn.body
    if not body:
        return 0
    first = min([body[0].lineno] + [d.lineno for d in getattr(body[0], "decorator_list", [])])
    span = lines[first - 1 : fn.end_lineno]
    return sum(1 for line in span if line.strip() and not line.strip().startswith("#"))


def function_lengths(source: str) -> Iterator[Tuple[int, str, int]]:
    """``(line, name, code lines)`` of every function and method in source, nested ones included.
    Raises SyntaxError where source is not Python."""
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.lineno, node.name, code_lines(node, lines)


def too_long(paths: Sequence[Path], root: Path = ROOT, limit: int = MAX_LINES) -> List[str]:
    """``path:line name N lines`` (path relative to root) for every function of paths longer than limit."""
    return [
        f"{path.relative_to(root).as_posix()}:{line} {name} {n} lines"
        for path in paths
        for line, name, n in function_lengths(path.read_text(encoding="utf-8"))
        if n > limit
    ]


SAMPLE = textwrap.dedent(
    '''
    import functools


    def sample(x: int) -> int:
        """A docstring
        over two lines, not counted."""

        # a comment line, not counted
        y = x + 1  # code with a comment after it counts

        @functools.lru_cache
        def inner(z: int) -> int:
            """Its docstring."""
            # nor this
            return z

        return (
            inner(y)
        )


    def only_a_docstring() -> None:
        """Nothing else."""


    async def one_line() -> int: return 1
    '''
)


def test_the_counter_leaves_out_docstrings_blanks_and_comments() -> None:
    got = {name: n for _line, name, n in function_lengths(SAMPLE)}
    # sample: y = ..., @functools.lru_cache, def inner, inner's docstring (code of sample's), return z,
    # return (, inner(y), ); inner: return z
    assert got == {"sample": 8, "inner": 1, "only_a_docstring": 0, "one_line": 1}


def test_a_long_function_is_listed_with_its_path_line_and_length(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES + 1))
    (tmp_path / "tests" / "long.py").write_text(f'def short():\n    """Doc."""\n    return 1\n\n\ndef long():\n{body}')
    assert too_long(python_files(tmp_path), tmp_path) == [f"tests/long.py:6 long {MAX_LINES + 1} lines"]


def test_the_walk_finds_the_repository_and_skips_the_generated_stub() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in python_files()}
    assert {"python/apple_roofline/__init__.py", "tests/unit/test_function_size.py", "bench/bench_cpu.py"} <= files
    assert not files & GENERATED


def test_no_function_is_longer_than_the_limit() -> None:
    found = too_long(python_files())
    assert not found, f"{len(found)} functions over {MAX_LINES} lines of code:\n" + "\n".join(found)
