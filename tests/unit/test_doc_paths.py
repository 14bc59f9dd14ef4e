"""Every path the docs and the code's comments name exists, and every link and design reference resolves.

* A repository path (``python/apple_roofline/roofline/model/model.py``, ``suites/hierarchy/``,
  ``native/core/backend.h``, ``bench/bench_clock.py`` ...) named in README.md, bench/README.md,
  docs/**/*.md, or in a comment or docstring under python/, native/, shaders/, tests/, tools/ or
  examples/ exists: relative to the repository, to the package (python/apple_roofline/), to native/
  or shaders/, or to the naming file's folder. Placeholders (``suites/<name>/spec.py``) are not paths.
* A relative Markdown link resolves to a file, and its anchor to a heading of that file.
* A design reference, ``docs/design/<page>.md, "Section"``, anywhere in those files names a page
  that exists and a heading or a paragraph's run-in title (``**Noisy samples.**``) on it.
* README.md is at most 12 KB, a design page 20 KB, any other doc 25 KB.

The recorded example reports (docs/report-*.md) are the tool's output: only their links are checked.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "apple_roofline"
DOCS = [
    ROOT / "README.md",
    ROOT / "bench" / "README.md",
    ROOT / "shaders" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
CODE_DIRS = ("python", "native", "shaders", "tests", "tools", "examples", "bench")
C_LIKE = {".h", ".hpp", ".cpp", ".cc", ".c", ".mm", ".m", ".metal", ".cu", ".cuh", ".wgsl", ".in"}
HASH_LIKE = {".sh", ".cmake", ".txt", ".toml"}
EXTENSIONS = "py|pyi|h|hpp|cpp|cc|c|mm|m|metal|cu|cuh|wgsl|md|toml|txt|json|jsonl|sh|cmake|png|csv|in|yml|yaml|ps1|html"
TOP = ("python", "native", "shaders", "docs", "bench", "tests", "tools", "examples", "cmake", ".ci")
BASES = (ROOT, PACKAGE, ROOT / "native", ROOT / "shaders", ROOT / "python")
# a path: known first component, then path characters, ending in a known extension or a slash
FIRST = "|".join(
    re.escape(n)
    for n in sorted(
        set(TOP)
        | {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}
        | {p.name for p in (ROOT / "native").iterdir() if p.is_dir()}
        | {p.name for p in (ROOT / "shaders").iterdir() if p.is_dir()}
        | {"apple_roofline"},
        key=len,
        reverse=True,
    )
)
PATH = re.compile(rf"(?<![\w./~$<>{{}}-])((?:{FIRST})/(?:[\w.-]+/)*(?:[\w.-]+\.(?:{EXTENSIONS})\b(?![\w/])|[\w.-]+/|))")
# a placeholder, not a path: bench/results/bench_webgpu-X.json, DIR/run.json
PLACEHOLDER = re.compile(r"(?:^|[/_.-])[A-Z](?:[/_.-]|$)")
LINK = re.compile(r"(?<!!)\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
DESIGN_REF = re.compile(r"docs/design/([\w-]+)\.md")
QUOTE_GAP = re.compile(r"[,;:]?[\s#:/*\\(]*\\?\"")


def _docs() -> List[Path]:
    return [p for p in DOCS if p.is_file()]


def _code_files() -> Iterator[Path]:
    for d in CODE_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", *C_LIKE, *HASH_LIKE}:
                yield p


def _python_comments(text: str) -> List[str]:
    """The comments and docstrings of a Python source."""
    out: List[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        pass
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append(doc)
        # attribute docstrings ("#:" comments are above); string statements after an assignment
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.append(node.value.value)
    return out


def _comments(path: Path) -> List[str]:
    text = path.read_text(errors="replace")
    if path.suffix == ".py":
        return _python_comments(text)
    if path.suffix in C_LIKE:
        return re.findall(r"//[^\n]*|/\*.*?\*/", text, flags=re.S)
    return re.findall(r"#[^\n]*", text)


def _exists(name: str, where: Path) -> bool:
    name = name.rstrip(".")
    return any((base / name).exists() for base in (*BASES, where))


def _named_paths(texts: List[str]) -> Set[str]:
    found: Set[str] = set()
    for text in texts:
        for m in PATH.finditer(text):
            name = m.group(1)
            if name and not PLACEHOLDER.search(name):
                found.add(name)
    return found


def _missing_paths(path: Path, texts: List[str]) -> List[str]:
    return sorted(n for n in _named_paths(texts) if not _exists(n, path.parent))


def test_every_path_the_docs_name_exists() -> None:
    missing = [
        f"{p.relative_to(ROOT)}: {name}"
        for p in _docs()
        if not p.name.startswith("report-")
        for name in _missing_paths(p, [p.read_text()])
    ]
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_every_path_a_comment_or_docstring_names_exists() -> None:
    missing = [f"{p.relative_to(ROOT)}: {name}" for p in _code_files() for name in _missing_paths(p, _comments(p))]
    assert not missing, "paths named in comments and docstrings that do not exist:\n" + "\n".join(missing)


#: The most bytes a doc may hold (issue 48): the README a newcomer reads first, a design page, any other
#: page. The recorded example reports (docs/report-*.md) are the tool's output and exempt.
README_MAX = 12 * 1024
DESIGN_PAGE_MAX = 20 * 1024
DOC_MAX = 25 * 1024


def _size_limit(path: Path) -> int:
    rel = path.relative_to(ROOT)
    if rel == Path("README.md"):
        return README_MAX
    if rel.parts[:2] == ("docs", "design"):
        return DESIGN_PAGE_MAX
    return DOC_MAX


def test_every_doc_is_short() -> None:
    over = [
        f"{p.relative_to(ROOT)}: {p.stat().st_size} bytes, at most {_size_limit(p)}"
        for p in _docs()
        if not p.name.startswith("report-") and p.stat().st_size > _size_limit(p)
    ]
    assert not over, "docs over their size:\n" + "\n".join(over)


def test_the_size_limits_are_the_pages_kinds() -> None:
    assert _size_limit(ROOT / "README.md") == README_MAX
    assert _size_limit(ROOT / "docs" / "design" / "clocks.md") == DESIGN_PAGE_MAX
    assert _size_limit(ROOT / "bench" / "README.md") == DOC_MAX


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@lru_cache(maxsize=None)
def _anchors(path: Path) -> Tuple[Set[str], Set[str]]:
    """The anchors of a Markdown file's headings, and its headings and run-in titles as written."""
    anchors: Set[str] = set()
    titles: Set[str] = set()
    seen: dict = {}
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = re.match(r"(#{1,6}) (.*)", line)
        if m and not in_code:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            anchors.add(base if n == 0 else f"{base}-{n}")
            titles.add(m.group(2).strip())
        r = re.match(r"\s*(?:[-*] )?(\*\*|\*)([^*\n]+?)\.?\1", line)
        if r and not in_code:
            titles.add(r.group(2).rstrip("."))
    return anchors, titles


def _broken_links(path: Path) -> Iterator[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            yield f"{target} (no such file)"
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest)[0]:
            yield f"{target} (no heading with that anchor)"


def test_every_relative_link_in_the_docs_resolves() -> None:
    broken = [f"{p.relative_to(ROOT)}: {b}" for p in _docs() for b in _broken_links(p)]
    assert not broken, "links that do not resolve:\n" + "\n".join(broken)


def design_refs(text: str) -> Iterator[Tuple[str, str]]:
    """Each ``docs/design/<page>.md, "Section"`` in ``text`` as (page, section); section is "" where
    none follows. A section may run over lines of a comment (``#``, ``//``, ``*``, ``#:``) or be a C
    string's escaped quotes."""
    for m in DESIGN_REF.finditer(text):
        rest = text[m.end() : m.end() + 240]
        gap = QUOTE_GAP.match(rest)
        section = ""
        if gap:
            body = re.match(r'((?:[^"\\]|\\(?!")|"\s*\n\s*f?")*?)\\?"', rest[gap.end() :])
            if body:
                raw = re.sub(r'"\s*\n\s*f?"', "", body.group(1))
                section = re.sub(r"\s*\n\s*(?:#:?|//|\*)?\s*", " ", raw).strip()
        yield m.group(1), section


def _bad_design_refs(path: Path) -> Iterator[str]:
    for page, section in design_refs(path.read_text(errors="replace")):
        target = ROOT / "docs" / "design" / f"{page}.md"
        if not target.is_file():
            yield f"docs/design/{page}.md (no such page)"
        elif section and section not in _anchors(target)[1]:
            yield f'docs/design/{page}.md, "{section}" (no such heading or run-in title on that page)'


def test_every_design_reference_names_a_page_and_section_that_exist() -> None:
    files = [p for p in [*_docs(), *_code_files()] if p != Path(__file__).resolve()]
    bad = [f"{p.relative_to(ROOT)}: {b}" for p in files for b in _bad_design_refs(p)]
    assert not bad, "design references that do not resolve:\n" + "\n".join(bad)


def test_no_reference_to_the_single_design_file_is_left() -> None:
    stale = [
        str(p.relative_to(ROOT))
        for p in [*_docs(), *_code_files()]
        if re.search(r"docs/design\.md\b", p.read_text(errors="replace")) and p != Path(__file__).resolve()
    ]
    assert not stale, "still naming docs/design.md, now split into docs/design/*.md:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('see docs/design/clocks.md, "Clocks"', [("clocks", "Clocks")]),
        (
            '(docs/design/watchdog.md,\n    # "A GPU whose render\n    # passes never finish")',
            [("watchdog", "A GPU whose render passes never finish")],
        ),
        ('"docs/design/budgets.md, \\"Time budgets\\")."', [("budgets", "Time budgets")]),
        ("docs/design/README.md lists the pages", [("README", "")]),
    ],
)
def test_design_references_are_read_across_lines_and_quotes(text: str, expected: List[Tuple[str, str]]) -> None:
    assert list(design_refs(text)) == expected


def test_a_missing_path_a_broken_anchor_and_an_unknown_section_are_caught(tmp_path: Path) -> None:
    old = "suites/access_kernels.py"
    assert _missing_paths(ROOT / "shaders" / "x.metal", [f"// see {old}"]) == [old]
    assert _missing_paths(ROOT / "shaders" / "x.metal", ["// see suites/access/kernels.py, /sys/x/y.py"]) == []
    assert _missing_paths(ROOT / "README.md", ["`suites/<name>/spec.py`, bench/results/x-N.json"]) == []
    assert _missing_paths(ROOT / "README.md", ["suites/hierarchy/ and suites/gone/"]) == ["suites/gone/"]
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\n[ok](#title) [bad](#nowhere) [gone](missing.md) [web](https://example.com)\n")
    assert list(_broken_links(doc)) == ["#nowhere (no heading with that anchor)", "missing.md (no such file)"]
    page = tmp_path / "b.py"
    page.write_text('# docs/design/clocks.md, "No such section"\n# docs/design/nopage.md, "Clocks"\n')
    assert list(_bad_design_refs(page)) == [
        'docs/design/clocks.md, "No such section" (no such heading or run-in title on that page)',
        "docs/design/nopage.md (no such page)",
    ]
