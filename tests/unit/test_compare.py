"""``compare`` of two or more runs: the tables (roofline/compare/compare.py), the overlaid figure
(compare_plot.py), the HTML page (compare_html.py) and the command (cli/compare.py), on the saved
runs of tests/unit/data (2, 3 and 8 runs; the 8 are the 4 saved runs and the same 4 with every
ceiling 7 % lower, standing in for a second node of the same machines)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, List, Sequence

import pytest
from typer.testing import CliRunner

pytest.importorskip("matplotlib")

from apple_roofline.cli import app
from apple_roofline.dispatch.model import DispatchStudy
from apple_roofline.roofline.compare.compare import (
    BASELINE_MEDIAN,
    Comparison,
    compare_markdown,
    compare_tables,
    path_labels,
    run_tags,
)
from apple_roofline.roofline.compare.compare_html import compare_html, compare_tooltips
from apple_roofline.roofline.compare.compare_plot import RUN_DASHES, mpl_dash, plot_compare, svg_dash
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.plot import CLASS_COLORS
from apple_roofline.roofline.views.tables import model_of
from apple_roofline.study.timing import SuiteTime

DATA = Path(__file__).parent / "data"
SAVED = ("run_h100.json", "run_xeon_16vcpu.json", "run_epyc_2vcpu.json", "run_h100_power.json")
runner = CliRunner()


def saved(name: str) -> Run:
    return Run.load(DATA / name)


def scaled(run: Run, factor: float) -> Run:
    return run.with_ceilings([dataclasses.replace(c, value=c.value * factor) for c in run.ceilings])


def eight_runs() -> List[Run]:
    base = [saved(n) for n in SAVED]
    return base + [scaled(r, 0.93) for r in base]


def write_runs(root: Path, runs: Sequence[Run]) -> List[Path]:
    paths = []
    for i, r in enumerate(runs):
        p = root / f"node{i // 4}" / f"gpu{i % 4}" / "run.json"
        p.parent.mkdir(parents=True)
        r.save(p)
        paths.append(p)
    return paths


def section(md: str, title: str) -> str:
    return md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def row(sec: str, first: str, nth: int = 0) -> List[str]:
    rows = [ln for ln in sec.splitlines() if ln.startswith(f"| {first} |")]
    return [c.strip() for c in rows[nth].strip().strip("|").split("|")]


# -- the model -------------------------------------------------------------------------


def test_run_tags() -> None:
    tags = run_tags(30)
    assert tags[:3] == ["A", "B", "C"] and tags[25:28] == ["Z", "AA", "AB"] and len(set(tags)) == 30


def test_path_labels(tmp_path: Path) -> None:
    assert path_labels([tmp_path / "n1/cuda0/run.json", tmp_path / "n1/cuda1/run.json"]) == ["cuda0", "cuda1"]
    assert path_labels([tmp_path / "a/run.json", tmp_path / "b/x.json"]) == ["a/run.json", "b/x.json"]
    assert path_labels([tmp_path / "n1/cuda0/run.json", tmp_path / "n2/cuda0/run.json"]) == ["n1/cuda0", "n2/cuda0"]
    assert path_labels([tmp_path / "run.json"]) == ["run.json"]
    # a file given again keeps its place, labelled with its count
    assert path_labels([tmp_path / "a.json", tmp_path / "a.json"]) == ["a.json", "a.json (2)"]
    assert path_labels([tmp_path / "n1/run.json", tmp_path / "n2/run.json", tmp_path / "n1/run.json"]) == [
        "n1",
        "n2",
        "n1 (2)",
    ]


def test_comparison_checks_its_input(m5_run: Run) -> None:
    with pytest.raises(ValueError, match="two or more runs, got 1"):
        Comparison((m5_run,))
    with pytest.raises(ValueError, match="1 labels for 2 runs"):
        Comparison((m5_run, m5_run), ("a",))
    with pytest.raises(ValueError, match=r"baseline 2 is neither a run \(0 to 1\) nor 'median'"):
        Comparison((m5_run, m5_run), baseline=2)


def test_two_runs(m5_run: Run, m5_run_b: Run) -> None:
    md = compare_markdown(Comparison((m5_run, m5_run_b)))
    assert md.startswith("# Roofline comparison: 2 runs of Apple M5, Apple M4")
    values, ratios = section(md, "Ceilings"), section(md, "Ceilings: ratios")
    assert row(values, "FP32 scalar ILP") == ["FP32 scalar ILP", "compute", "measured", "GFLOP/s", "3,849", "3,079"]
    assert row(ratios, "FP32 scalar ILP") == ["FP32 scalar ILP", "compute", "measured", "GFLOP/s", "1.00×", "0.80×"]
    assert "Each run's value divided by A's." in ratios
    theo = [ln for ln in ratios.splitlines() if "| theoretical |" in ln]  # only A has theoretical ceilings
    assert len(theo) == 3 and all(ln.rstrip(" |").endswith("—") for ln in theo)
    ridge = section(md, "Ridge points: ratios")  # both scaled by 0.8: the same ridge point
    assert row(ridge, "FP32 scalar ILP") == ["FP32 scalar ILP", "1.00×", "1.00×"]
    assert row(section(md, "Ridge points (measured, FLOP/byte)"), "FP32 scalar ILP")[1:] == ["31.5", "31.5"]


def test_a_partial_run_and_a_run_without_ceilings(m5_run: Run) -> None:
    b = dataclasses.replace(m5_run.with_ceilings([]), complete=False)
    md = compare_markdown(Comparison((m5_run, b)))
    assert row(section(md, "Runs"), "B")[-1] == "INTERRUPTED — partial results"
    assert row(section(md, "Ceilings"), "FP32 vector")[-1] == "—"
    assert row(section(md, "Ridge points: ratios"), "FP32 vector")[-1] == "—"


def test_three_saved_runs_against_their_median() -> None:
    runs = tuple(saved(n) for n in SAVED[:3])
    md = compare_markdown(Comparison(runs, baseline=BASELINE_MEDIAN))
    ratios = section(md, "Ceilings: ratios")
    assert "Each run's value divided by the median's." in ratios
    # three runs with DRAM bandwidth: the middle one (the Xeon's) is the median
    dram = row(ratios, "DRAM bandwidth")
    h100, xeon, epyc = (
        next(c.value for c in r.ceilings if c.name == "DRAM bandwidth" and c.source == "measured") for r in runs
    )
    assert dram[4:] == [
        f"{h100 / xeon:.2f}×",
        "1.00×",
        f"{epyc / xeon:.2f}×",
        row(section(md, "Ceilings"), "DRAM bandwidth")[5],
    ]
    # a ceiling only the H100 has: its own median, the others —
    assert row(ratios, "GEMM INT8")[4:7] == ["1.00×", "—", "—"]


def test_baseline_is_a_run() -> None:
    runs = tuple(saved(n) for n in SAVED[:3])
    md = compare_markdown(Comparison(runs, baseline=2))
    assert row(section(md, "Ceilings: ratios"), "FP64")[6] == "1.00×"
    assert "Baseline: C." in section(md, "Runs")


def test_eight_runs_table() -> None:
    runs = eight_runs()
    c = Comparison(tuple(runs), tuple(f"n{i}" for i in range(8)))
    md = compare_markdown(c)
    values = section(md, "Ceilings")
    assert values.splitlines()[2].count("|") == 4 + 8 + 1  # Ceiling, Kind, Source, Unit and 8 runs
    ratios = section(md, "Ceilings: ratios")
    assert row(ratios, "DRAM bandwidth")[4:] == ["1.00×", "0.03×", "0.02×", "1.00×", "0.93×", "0.03×", "0.02×", "0.93×"]
    assert [r[0] for r in compare_tables(c)[0][1].rows] == list("ABCDEFGH")


# -- the figure --------------------------------------------------------------------------


def _lines(fig: Any, prefix: str) -> List[Any]:
    return [ln for ln in fig.axes[0].get_lines() if (ln.get_gid() or "").startswith(prefix)]


def test_figure_of_eight_runs() -> None:
    """A colour per ceiling (the same in every run), a line style per run (the same for all its
    ceilings), one label per ceiling at its end, and a legend of one entry per run."""
    import matplotlib.colors

    runs = eight_runs()
    models = [model_of(r) for r in runs]
    fig = plot_compare([m for m in models if m is not None])
    ax = fig.axes[0]
    assert ax.get_title() == "8 rooflines overlaid"
    for tag in "abcdefgh":
        lines = _lines(fig, f"{tag}:ceiling:")
        assert lines and all(":measured:" in ln.get_gid() for ln in lines)  # measured only by default
        assert len({str(ln._unscaled_dash_pattern) for ln in lines}) == 1
    drawn = [_lines(fig, f"{tag}:ceiling:")[0]._unscaled_dash_pattern[1] for tag in "abcdefgh"]
    assert drawn[0] is None and len({tuple(d) for d in drawn[1:]}) == 7  # A solid, each other run its own style
    by_name: dict = {}
    for ln in _lines(fig, ""):
        if ":ceiling:" in ln.get_gid():
            by_name.setdefault(ln.get_gid().split(":", 4)[4], set()).add(matplotlib.colors.to_hex(ln.get_color()))
    assert all(len(c) == 1 for c in by_name.values()), by_name  # one colour per ceiling across the runs
    assert by_name["FP32 vector"] == {CLASS_COLORS["FP32 vector"].lower()} and by_name["DRAM bandwidth"] == {"#000000"}
    assert len({next(iter(c)) for c in by_name.values()}) == len(by_name)  # and no two ceilings share one
    labels = sorted(t.get_gid() for t in ax.texts if (t.get_gid() or "").startswith("label:"))
    assert labels == sorted(
        f"label:{k}:{n}" for n in by_name for k in ["bandwidth" if "bandwidth" in n else "compute"]
    )  # one label per ceiling
    assert all(not t.get_text().startswith("A: ") for t in ax.texts)  # 8 runs: names only, values in the tables
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == 8 and legend[0].startswith("A: NVIDIA H100") and legend[7].startswith("H: NVIDIA H100")
    # nested widths: a run of the same device drawn later is narrower, so both show
    assert _lines(fig, "a:ceiling:")[0].get_linewidth() > _lines(fig, "e:ceiling:")[0].get_linewidth()


def test_two_run_figure_labels_each_ceiling_with_both_values(m5_run: Run, m5_run_b: Run) -> None:
    fig = plot_compare([model_of(m5_run), model_of(m5_run_b)])  # type: ignore[list-item]
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("label:")}
    assert texts["label:compute:FP32 scalar ILP"] == "FP32 scalar ILP: A 3,849 GFLOP/s, B 3,079 GFLOP/s"
    assert texts["label:bandwidth:DRAM bandwidth"] == "DRAM bandwidth: A 122 GB/s, B 97.6 GB/s"
    assert [mpl_dash(d, 2.0) for d in RUN_DASHES[:2]] == ["-", (0, (3.0, 1.5))]  # in points at any width
    assert svg_dash(RUN_DASHES[0]) == "none" and svg_dash(RUN_DASHES[1]) == "6 3"


def test_figure_with_theoretical_ceilings(m5_run: Run, m5_run_b: Run) -> None:
    models = [model_of(m5_run), model_of(m5_run_b), model_of(m5_run)]
    fig = plot_compare([m for m in models if m is not None], theoretical=True)
    assert _lines(fig, "a:ceiling:theoretical:") and _lines(fig, "c:ceiling:theoretical:")
    with pytest.raises(ValueError, match="two or more rooflines, got 1"):
        plot_compare([m for m in models[:1] if m is not None])


# -- the HTML page ------------------------------------------------------------------------


def test_html_page_names_every_run_and_hangs_hover_text() -> None:
    runs = eight_runs()
    c = Comparison(tuple(runs), tuple(f"n{i}" for i in range(8)), BASELINE_MEDIAN)
    page = compare_html(c)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    outside_scripts = re.sub(r"<script.*?</script>", "", page, flags=re.S)  # plotly.js names its site in strings
    assert not re.search(r"""(src|href)=["'](https?:|//)""", outside_scripts)  # self-contained: nothing fetched
    for i, tag in enumerate("ABCDEFGH"):  # each run's line style beside its tag
        assert re.search(
            rf'<li id="run-{tag}"><svg [^>]*><line [^>]*stroke-dasharray="{svg_dash(RUN_DASHES[i])}"/>'
            rf'</svg> <span class="run">{tag}</span>',
            page,
        )
    tips = compare_tooltips(c)
    dram_e = tips["e:ceiling:measured:bandwidth:DRAM bandwidth"]
    assert dram_e.startswith("E: NVIDIA H100 80GB HBM3 (cuda)") and "of the median" in dram_e
    for tag in "abcdefgh":  # every run's lines carry their hover text in the SVG
        assert re.search(rf'<g id="{tag}:ceiling:measured:bandwidth:DRAM bandwidth"><title>', page)
    assert page.count("<table>") == len(compare_tables(c))


def _browser() -> str:
    for name in ("chromium-headless-shell", "chromium", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless Chromium (Debian: apt-get install chromium-headless-shell; .ci/run installs it)")


def _near(pixels: Any, color: str, tolerance: int = 24) -> int:
    import numpy as np

    rgb = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.int32)
    return int((np.abs(pixels[..., :3].astype(np.int32) - rgb).max(axis=-1) <= tolerance).sum())


def test_eight_run_page_in_a_headless_browser(tmp_path: Path) -> None:
    """Chromium renders the 8-run page: every run's list entry is in the rendered DOM, and the
    screenshot of the figure holds the colour of every ceiling all eight runs share (the page's only
    coloured pixels)."""
    browser = _browser()
    paths = write_runs(tmp_path / "runs", eight_runs())
    page = tmp_path / "compare.html"
    result = runner.invoke(app, ["compare", str(tmp_path / "runs"), "-o", str(page)])
    assert result.exit_code == 0, result.output
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1300"]
    env = dict(os.environ, HOME=str(tmp_path))
    dom = subprocess.run(
        args + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, env=env, check=True
    ).stdout
    labels = path_labels(paths)
    for tag, label in zip("ABCDEFGH", labels):
        entry = re.search(rf'<li id="run-{tag}">(.*?)</li>', dom, re.S)
        assert entry is not None and label in entry.group(1), tag
    shot = tmp_path / "shot.png"
    subprocess.run(
        args + [f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, env=env, check=True
    )
    import matplotlib.image

    pixels = (matplotlib.image.imread(shot) * 255).round()
    assert pixels.shape[:2] == (1300, 1200)
    shared = ("FP32 vector", "FP64", "GEMM FP32", "GEMM FP64")
    counts = {name: _near(pixels, CLASS_COLORS[name]) for name in shared}
    assert all(n > 300 for n in counts.values()), counts  # lines are thousands of pixels


# -- the command --------------------------------------------------------------------------


def invoke(args: Sequence[str]) -> Any:
    return runner.invoke(app, list(args))


def errors(result: Any) -> List[str]:
    return [ln for ln in result.stderr.splitlines() if ln.strip()]


def test_cli_three_runs_by_folder_and_pattern(tmp_path: Path) -> None:
    paths = write_runs(tmp_path, [saved(n) for n in SAVED[:3]])
    by_folder = invoke(["compare", str(tmp_path)])
    assert by_folder.exit_code == 0, by_folder.output
    by_glob = invoke(["compare", str(tmp_path / "**" / "run.json")])
    assert by_glob.stdout == by_folder.stdout
    expected = compare_markdown(Comparison(tuple(Run.load(p) for p in paths), tuple(path_labels(paths))))
    assert by_folder.stdout.rstrip("\n") == expected.rstrip("\n")
    assert "| C | AMD EPYC (cpu) — 2026-11-20 | gpu2 |" in by_folder.stdout


def test_cli_baseline_options(tmp_path: Path) -> None:
    a, b, c = write_runs(tmp_path, [saved(n) for n in SAVED[:3]])
    r = invoke(["compare", str(a), str(b), str(c), "--baseline", str(c)])
    assert r.exit_code == 0 and "Baseline: C." in r.stdout
    r = invoke(["compare", str(a), str(b), "--baseline", str(c)])  # not among the runs: first
    assert r.exit_code == 0 and "Baseline: A." in r.stdout and "| A | AMD EPYC (cpu)" in r.stdout
    r = invoke(["compare", str(a), str(b), "--baseline", "median"])
    assert r.exit_code == 0 and "Baseline: the median." in r.stdout
    r = invoke(["compare", str(a), str(b), "--baseline", "middle"])
    assert r.exit_code == 2 and errors(r) == [
        "error: --baseline 'middle' is neither a file nor 'median' (valid: a "
        "results file among the runs or another one, or median)"
    ]


def test_cli_refuses_other_kinds_and_schema_versions_one_line_each(tmp_path: Path, m5_run: Run) -> None:
    good = tmp_path / "good.json"
    m5_run.save(good)
    study = DispatchStudy(
        **{
            k: getattr(m5_run, k)
            for k in ("tool", "created", "finished", "host", "device", "command", "complete", "warnings")
        },
        params={},
    )
    other = tmp_path / "dispatch.json"
    study.save(other)
    newer = tmp_path / "newer.json"
    newer.write_text(good.read_text().replace('"schema_version": 1', '"schema_version": 2'))
    r = invoke(["compare", str(good), str(other), str(newer), str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and r.stdout == ""
    lines = errors(r)
    assert len(lines) == 3 and all(ln.startswith("error: ") for ln in lines)
    assert "missing.json: no such file or folder" in lines[0]
    assert str(other) in lines[1] and "not a roofline run" in lines[1]
    assert str(newer) in lines[2] and "schema_version 2 is not supported" in lines[2]


def test_cli_needs_two_runs(tmp_path: Path, m5_run: Run) -> None:
    m5_run.save(tmp_path / "run.json")
    r = invoke(["compare", str(tmp_path)])
    assert r.exit_code == 2 and errors(r) == [f"error: compare needs two or more runs, got 1 ({tmp_path / 'run.json'})"]
    r = invoke(["compare", str(tmp_path / "nothing*.json"), str(tmp_path / "run.json")])
    assert r.exit_code == 2 and "the pattern matches no file" in errors(r)[0]


def test_cli_compares_a_run_with_itself(tmp_path: Path, m5_run: Run) -> None:
    """``compare a.json a.json`` (and a folder beside a file it holds): every ratio 1.00, the second copy named."""
    path = tmp_path / "a.json"
    m5_run.save(path)
    r = invoke(["compare", str(path), str(path)])
    assert r.exit_code == 0, r.output
    runs = section(r.stdout, "Runs")
    assert row(runs, "A")[2] == "a.json" and row(runs, "B")[2] == "a.json (2)"
    ratios = section(r.stdout, "Ceilings: ratios")
    cells = [ln.split("|")[-2].strip() for ln in ratios.splitlines() if ln.startswith("| ") and "×" in ln]
    assert cells and set(cells) == {"1.00×"}
    (tmp_path / "d").mkdir()
    m5_run.save(tmp_path / "d" / "run.json")
    r = invoke(["compare", str(tmp_path / "d"), str(tmp_path / "d" / "run.json")])
    assert r.exit_code == 0, r.output
    assert row(section(r.stdout, "Runs"), "B")[2] == "run.json (2)"


def test_cli_lists_a_partial_run_as_partial(tmp_path: Path, m5_run: Run) -> None:
    cut = dataclasses.replace(m5_run, suite_times=(SuiteTime("stream", 3.0, 2.0, 3, True, 4, "stream/triad/fp32 n=8"),))
    a, b = write_runs(tmp_path, [m5_run, cut])
    r = invoke(["compare", str(a), str(b), "-o", str(tmp_path / "c.html")])
    assert r.exit_code == 0, r.output
    runs = section(r.stdout, "Runs")
    assert row(runs, "A")[-1] == "complete"
    assert row(runs, "B")[-1] == (
        "PARTIAL — cut by budget: stream cut by its 2 s budget (3 of 4 planned cases "
        "measured; not measured from stream/triad/fp32 n=8 on)"
    )
    page = (tmp_path / "c.html").read_text()
    assert "PARTIAL — cut by budget: stream cut by its 2 s budget" in page and 'id="figure-note"' in page
    r = invoke(["compare", str(a), str(b), "-o", str(tmp_path / "c.svg")])
    assert r.exit_code == 0, r.output
    note = (tmp_path / "c.svg").read_text().split('id="figure-note"', 1)[1]
    assert "<!-- Partial runs, not every case drawn: B: PARTIAL — cut by budget: stream cut by its 2 s" in note
    r = invoke(["compare", str(a), str(a), "-o", str(tmp_path / "whole.svg")])
    assert r.exit_code == 0 and 'id="figure-note"' not in (tmp_path / "whole.svg").read_text()


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".html", b"<!DOCTYPE")])
def test_cli_writes_the_figure_or_the_page(tmp_path: Path, suffix: str, magic: bytes) -> None:
    write_runs(tmp_path / "runs", eight_runs())
    target = tmp_path / f"compare{suffix}"
    r = invoke(["compare", str(tmp_path / "runs"), "-o", str(target)])
    assert r.exit_code == 0, r.output
    assert target.read_bytes().startswith(magic) and f"wrote {target}" in r.stderr


def test_cli_bad_suffix(tmp_path: Path, m5_run: Run) -> None:
    a, b = write_runs(tmp_path, [m5_run, m5_run])
    r = invoke(["compare", str(a), str(b), "-o", str(tmp_path / "x.gif")])
    assert r.exit_code == 2 and errors(r) == [
        f"error: -o '{tmp_path / 'x.gif'}' has an unsupported suffix '.gif' (valid: .png, .svg, .pdf, .html)"
    ]
