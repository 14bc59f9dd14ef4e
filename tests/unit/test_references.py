"""References for ``compare --reference`` (python/apple_roofline/references): the packaged published
figures (each with its source) set beside a run of their chip, and the project's own measured runs
as a health check with the node run's outlier rule."""

from __future__ import annotations

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path
from typing import List

import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.node.report import DEFAULT_OUTLIER_PCT
from apple_roofline.references import (
    BASES,
    PublishedReference,
    RunReference,
    chip_key,
    health_flags,
    load_reference,
    published_lines,
    published_table,
    reference_names,
    reference_sections,
)
from apple_roofline.roofline.compare.compare import Comparison, compare_markdown
from apple_roofline.roofline.model.ceiling_names import known_ceiling_names
from apple_roofline.roofline.model.run import Run
from apple_roofline.study.files import ResultsError
from apple_roofline.study.records import CEILING_KINDS, CEILING_SOURCES
from apple_roofline.text import sig_figs

DATA = Path(__file__).parent / "data"
runner = CliRunner()
RUN_REFERENCES = [n for n in reference_names() if isinstance(load_reference(n), RunReference)]
PUBLISHED = [n for n in reference_names() if isinstance(load_reference(n), PublishedReference)]
#: The vendors whose chips published figures are for: a chip is named as its device reports it.
VENDORS = ("Apple", "AMD")


def published(name: str) -> PublishedReference:
    ref = load_reference(name)
    assert isinstance(ref, PublishedReference)
    return ref


def run_reference(name: str) -> RunReference:
    ref = load_reference(name)
    assert isinstance(ref, RunReference)
    return ref


def lowered(run: Run, ceiling: str, factor: float) -> Run:
    """The run with every measurement that sets ``ceiling`` slower by ``factor`` (its samples
    divided by it), so that the ceiling derived again on reading is ``factor`` of the original."""
    ms = tuple(
        dataclasses.replace(m, samples_s=tuple(s / factor for s in m.samples_s)) if m.ceiling_class == ceiling else m
        for m in run.measurements
    )
    return dataclasses.replace(run, measurements=ms)


def lines(text: str, prefix: str) -> List[str]:
    return [ln for ln in text.splitlines() if ln.startswith(prefix)]


# -- the packaged data -------------------------------------------------------------------


def test_the_catalog() -> None:
    names = reference_names()
    assert len(names) == len(set(names))
    assert {"m5-article", "mlx-article", "a19-article", "metal-benchmarks", "780m-article", "h100"} <= set(names)
    with pytest.raises(ValueError, match=r"no reference is called 'h999' \(valid: m5-article, "):
        load_reference("h999")


@pytest.mark.parametrize("name", PUBLISHED)
def test_every_published_figure_has_its_source(name: str) -> None:
    ref = published(name)
    assert ref.name == name and ref.source.title and ref.figures
    for f in ref.figures:
        assert f.chip.split(" ", 1)[0] in VENDORS and " " in f.chip and f.figure and f.unit and f.where, f
        assert f.basis in BASES and f.value > 0, f
        assert (f.ceiling is None) or (f.device_field is None), f


@pytest.mark.parametrize("name", PUBLISHED)
def test_every_compare_to_names_a_ceiling_a_run_can_hold(name: str) -> None:
    """A figure set beside a ceiling names one a run of some suite can hold (measured, or theoretical)
    in that ceiling's unit, so that a run of its chip and engine can match it."""
    known = set(known_ceiling_names())
    for f in published(name).figures:
        if f.ceiling is not None:
            assert f.ceiling in known and f.ceiling_source in CEILING_SOURCES, f
            assert f.unit in CEILING_KINDS.values(), f
        if f.device_field is not None:
            assert f.device_field == "gpu_cores" and f.unit == "cores", f


def test_no_packaged_file_cites_a_local_path() -> None:
    data = resources.files("apple_roofline.references").joinpath("data")
    texts = {p.name: p.read_text(encoding="utf-8") for p in data.iterdir() if p.name.endswith(".json")}
    assert "references.json" in texts and "m5-article.json" in texts
    for name, text in texts.items():
        assert "/work/" not in text and "shared/reference" not in text, name


@pytest.mark.parametrize("name", RUN_REFERENCES)
def test_a_run_reference_keeps_its_provenance(name: str) -> None:
    ref = run_reference(name)
    run = ref.run
    assert run.complete and run.backend == "cuda" and run.tool.git_revision
    assert run.command[:1] and "run" in run.command  # the default run: no --suite
    assert not any(a.startswith("--suite") for a in run.command)
    assert ref.recorded().startswith(f"run of {run.created[:10]} by apple_roofline ")
    assert ref.provenance and ref.description


def test_reading_checks_the_published_layout() -> None:
    good = json.loads(
        resources.files("apple_roofline.references")
        .joinpath("data")
        .joinpath("m5-article.json")
        .read_text(encoding="utf-8")
    )
    bad = dict(good, figures=[dict(good["figures"][0], basis="rumour")])
    with pytest.raises(
        ResultsError,
        match=r"x.json: figures\[0\].basis must be one of benchmark, specification, "
        r"estimate, not 'rumour'",
    ):
        PublishedReference.from_dict(bad, source="x.json")
    both = dict(good, figures=[dict(good["figures"][0], compare_to={"ceiling": "A", "device": "gpu_cores"})])
    with pytest.raises(ResultsError, match="must name a ceiling or a device field"):
        PublishedReference.from_dict(both, source="x.json")
    no_value = dict(good, figures=[{k: v for k, v in good["figures"][0].items() if k != "value"}])
    with pytest.raises(ResultsError, match=r"figures\[0\].value is missing"):
        PublishedReference.from_dict(no_value, source="x.json")


# -- published figures beside a run ----------------------------------------------------------


def test_a_matching_chip_shows_the_m5_article_with_sources(m5_run: Run) -> None:
    ref = published("m5-article")
    table = published_table(ref, [m5_run], ["A"])
    assert table.header == ("Chip", "Engine", "Figure", "Published", "Unit", "Basis", "Set beside", "A", "Where")
    assert all("easured" not in h for h in table.header)  # the published column is never "measured"
    assert len(table.rows) == len(ref.figures)
    rows = {r[2]: r for r in table.rows}
    assert rows["STREAM copy"][3:6] == ("121.8", "GB/s", "benchmark")
    assert rows["FP32 peak, optimized scalar sweep"][6:8] == ("measured FP32 scalar ILP", "3,849 (1.00×)")
    assert rows["FP16 peak, scalar 32 chains"][7] == "6,004 (1.00×)"
    assert rows["GPU cores"][7] == "10 (1.00×)"  # the device's gpu_cores
    assert rows["Neural Engine FP16 matmul, batch 256, 2048x2048"][7] == "—"  # no counterpart in a GPU run
    assert rows["AMX FP32 GEMM (cblas_sgemm)"][7] == "—"  # a CPU figure beside a Metal run: not compared
    assert all(r[-1] for r in table.rows)  # every figure says where in its source it stands
    assert "Source: 'Apple M5 GPU Roofline Analysis'" in table.notes[0]
    assert "never measured by this tool" in table.notes[1]


def test_compare_puts_the_m5_article_beside_a_run(tmp_path: Path, m5_run: Run) -> None:
    m5_run.save(tmp_path / "run.json")
    r = runner.invoke(app, ["compare", str(tmp_path), "--reference", "m5-article"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.startswith("# Roofline comparison: 1 run of Apple M5 against the reference m5-article\n")
    sec = out.split("## Published figures: m5-article (not measured by this tool)\n", 1)[1]
    assert "Source: 'Apple M5 GPU Roofline Analysis'" in sec
    for f in published("m5-article").figures:
        assert lines(sec, f"| Apple M5 | {f.engine} | {f.figure} |")[0].endswith(f"| {f.where} |")
    assert "| Apple M5 | GPU | STREAM triad | 125 | GB/s | benchmark | measured DRAM bandwidth | 122 (0.98×) |" in sec


def test_another_chip_lists_the_figures_for_reading(m5_run_b: Run) -> None:
    ref = published("m5-article")
    table = published_table(ref, [m5_run_b], ["A"])  # an Apple M4
    assert table.header[-2:] == ("Set beside", "Where")  # no run column: nothing set beside the M4
    assert len(table.rows) == len(ref.figures)
    assert (
        "m5-article publishes figures for Apple M5; the runs are of another chip (Apple M4 (A)): its figures "
        "are listed for reading, set beside no run."
    ) in table.notes


def test_two_runs_one_of_the_chip(m5_run: Run, m5_run_b: Run) -> None:
    sections, flags = reference_sections(published("m5-article"), [m5_run_b, m5_run], ["A", "B"])
    ((title, table),) = sections
    assert flags == [] and title.startswith("Published figures: m5-article")
    assert table.header[7:-1] == ("B",)  # only the M5 run gets a column


def test_a_chip_is_matched_by_its_chip_field_too(m5_run_b: Run) -> None:
    m1 = dataclasses.replace(
        m5_run_b, device={"backend": "metal", "name": "Apple GPU", "chip": "Apple M1 Max", "gpu_cores": 24}
    )
    table = published_table(published("metal-benchmarks"), [m1], ["A"])
    assert {r[0] for r in table.rows} == {"Apple M1 Max"}
    cores = next(r for r in table.rows if r[2] == "GPU cores")
    assert cores[3] == "32" and cores[7] == "24 (0.75×)"  # a binned part: fewer cores than the table's


def test_the_780m_study_is_read_beside_a_run_of_another_chip() -> None:
    """The Radeon 780M study beside an H200 run (of another chip): every figure listed for reading,
    no run column, and its three roofs drawn, each naming the 780M."""
    r = runner.invoke(app, ["compare", str(DATA / "run_h200_default.json"), "--reference", "780m-article"])
    assert r.exit_code == 0, r.output
    sec = r.stdout.split("## Published figures: 780m-article (not measured by this tool)\n", 1)[1]
    assert "780m-article publishes figures for AMD Radeon 780M; the runs are of another chip (NVIDIA H200 (A))" in sec
    ref = published("780m-article")
    assert ref.source.url and ref.source.citation().endswith("(no author, publisher or date stated)")
    for f in ref.figures:
        assert lines(sec, f"| AMD Radeon 780M | GPU | {f.figure} |")[0].endswith(f"| {f.where} |")
    assert "| FP32 peak, float4 sweep (AI 32, 54 W) | 1,181 | GFLOP/s | benchmark | measured FP32 vector |" in sec
    run = run_reference("h200").run
    drawn = {(p.name, p.value) for p in published_lines(ref, [run])}
    assert drawn == {("DRAM bandwidth", 73.0), ("FP32 vector", 1181.0), ("FP32 scalar ILP", 4700.0)}
    assert {p.where for p in published_lines(ref, [run])} == {"AMD Radeon 780M GPU"}


def test_chip_names_match_across_drivers() -> None:
    """What drivers append to a GPU's name is not the chip: D3D12's trademark and "Graphics", Mesa's
    "(RADV ...)"; a larger part of the same family stays another chip."""
    assert chip_key("AMD Radeon(TM) 780M Graphics") == chip_key("AMD Radeon 780M (RADV PHOENIX)") == "amd radeon 780m"
    assert chip_key(" apple  M5 ") == "apple m5" != chip_key("Apple M5 Pro")
    assert chip_key("") == ""


def test_the_780m_study_is_set_beside_a_webgpu_run_of_a_780m() -> None:
    """A WebGPU run of a Radeon 780M (here the H200 run's measurements under a D3D12 adapter's name)
    gets each figure with a counterpart set beside its own, with the ratio; the sweep points of no
    ceiling stay without one."""
    h200 = run_reference("h200").run
    device = {"backend": "wgpu", "name": "AMD Radeon(TM) 780M Graphics", "api": "D3D12"}
    run = dataclasses.replace(h200, device=device)
    table = published_table(published("780m-article"), [run], ["A"])
    assert table.header[7] == "A"
    dram = next(r for r in table.rows if r[6] == "measured DRAM bandwidth")
    mine = next(c for c in run.ceilings if c.name == "DRAM bandwidth" and c.source == "measured").value
    assert dram[7] == f"{sig_figs(mine)} ({mine / 73:.2f}×)"
    assert all(r[7] == "—" for r in table.rows if r[6] == "—")
    cuda = dataclasses.replace(
        run, device={**device, "backend": "cuda"}
    )  # a GPU figure is set beside Metal and WebGPU runs
    assert all(c[7] == "—" for c in published_table(published("780m-article"), [cuda], ["A"]).rows)


def test_one_run_without_a_reference_is_refused(tmp_path: Path, m5_run: Run) -> None:
    m5_run.save(tmp_path / "run.json")
    r = runner.invoke(app, ["compare", str(tmp_path / "run.json")])
    assert r.exit_code == 2 and "compare needs two or more runs, got 1" in r.stderr
    with pytest.raises(ValueError, match="two or more runs, got 1"):
        Comparison((m5_run,))
    assert compare_markdown(Comparison((m5_run,), reference="m5-article")).startswith(
        "# Roofline comparison: 1 run of Apple M5 against the reference m5-article"
    )


def test_one_run_is_drawn_beside_the_published_ceilings(tmp_path: Path, m5_run: Run) -> None:
    """Issue 45: ``compare RUN --reference m5-article -o page.html`` was refused ("-o overlays two or
    more runs, got 1"); the run is drawn beside the article's ceilings, each labelled published, in the
    page's interactive figure and its static one, and in a figure file."""
    m5_run.save(tmp_path / "run.json")
    page_path = tmp_path / "page.html"
    r = runner.invoke(app, ["compare", str(tmp_path / "run.json"), "--reference", "m5-article", "-o", str(page_path)])
    assert r.exit_code == 0, r.output
    page = page_path.read_text(encoding="utf-8")
    assert "<title>Roofline comparison: 1 run of Apple M5 beside the published figures of m5-article</title>" in page
    drawn = {(p.source, p.kind, p.name) for p in published_lines(published("m5-article"), [m5_run])}
    assert ("measured", "bandwidth", "DRAM bandwidth") in drawn and ("measured", "compute", "FP32 vector") in drawn
    static = {tuple(g.split(":")[2:]) for g in re.findall(r'id="(published:ceiling:[^"]*)"', page)}
    assert static == {d for d in drawn if d[0] == "measured"}  # the measured ones, as the runs' ceilings
    assert "<title>DRAM bandwidth, published (Apple M5 GPU): 125 GB/s" in page
    assert "not measured by this tool" in page
    from apple_roofline.roofline.compare.compare_interactive import compare_figure

    comparison = Comparison(
        (m5_run,), reference="m5-article", published=published_lines(published("m5-article"), [m5_run])
    )
    figure = compare_figure(comparison)
    assert figure is not None
    names = {t["name"] for t in figure["data"] if t["meta"]["role"] == "published"}
    assert names == {f"{name}, published (Apple M5 GPU)" for s_, _k, name in drawn if s_ == "measured"}
    svg_path = tmp_path / "c.svg"
    r = runner.invoke(app, ["compare", str(tmp_path / "run.json"), "--reference", "m5-article", "-o", str(svg_path)])
    assert r.exit_code == 0, r.output
    svg = svg_path.read_text(encoding="utf-8")
    assert 'id="published:ceiling:measured:bandwidth:DRAM bandwidth"' in svg
    assert "published: m5-article (Apple M5 GPU), not measured by this tool" in svg


def test_the_published_lines_are_the_highest_figure_of_each_ceiling(m5_run: Run, m5_run_b: Run) -> None:
    lines_ = {(p.where, p.source, p.name): p for p in published_lines(published("m5-article"), [m5_run])}
    dram = lines_[("Apple M5 GPU", "measured", "DRAM bandwidth")]
    assert dram.value == 125.0 and "the highest of 4 figures" in dram.note and "STREAM triad" in dram.note
    assert not any(where.endswith("CPU (AMX)") for where, _s, _n in lines_)  # a Metal run: the GPU's figures
    other = published_lines(published("m5-article"), [m5_run_b])  # an Apple M4: the one chip's, for reading
    assert {p.where for p in other} == {"Apple M5 GPU", "Apple M5 CPU (AMX)"}


def test_a_figure_needs_published_ceilings_for_its_one_run(tmp_path: Path, m5_run: Run) -> None:
    """A reference of several chips, none the run's: nothing published to draw beside it."""
    m5_run.save(tmp_path / "run.json")
    r = runner.invoke(
        app, ["compare", str(tmp_path / "run.json"), "--reference", "metal-benchmarks", "-o", str(tmp_path / "c.png")]
    )
    assert r.exit_code == 2, r.output
    (line,) = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert line.startswith("error: -o draws the run beside the published ceilings of metal-benchmarks, which has none")
    assert "valid: a run of Apple M1," in line
    assert not (tmp_path / "c.png").exists()


# -- the command's options ---------------------------------------------------------------------


def test_list_references() -> None:
    r = runner.invoke(app, ["compare", "--list-references"])
    assert r.exit_code == 0, r.output
    for name in reference_names():
        assert len(lines(r.stdout, f"| {name} | ")) == 1
    assert "| m5-article | published figures | Apple M5 | 'Apple M5 GPU Roofline Analysis'" in r.stdout
    assert "| 780m-article | published figures | AMD Radeon 780M | 'Ryzen 7 8745HS (Zen 4 APU, Phoenix)" in r.stdout
    assert "| h100 | measured run (this project) | NVIDIA H100 80GB HBM3 (cuda) | run of 2026-11-24" in r.stdout
    r = runner.invoke(app, ["compare", "--list-references", str(DATA / "run_h100.json")])
    assert r.exit_code == 2 and "--list-references takes no runs" in r.stderr


def test_an_unknown_reference_is_bad_usage() -> None:
    r = runner.invoke(app, ["compare", str(DATA / "run_h100.json"), "--reference", "m6-article"])
    assert r.exit_code == 2
    assert "error: --reference: no reference is called 'm6-article' (valid: m5-article, " in r.stderr
    r = runner.invoke(app, ["compare", str(DATA / "run_h100.json"), "--reference", "h100", "--outlier-pct", "-1"])
    want = "--outlier-pct '-1' is out of range (valid: a finite number of percent, 0 or more)"
    assert r.exit_code == 2 and want in r.stderr


# -- a measured run as a health check ----------------------------------------------------------


@pytest.mark.parametrize("name", RUN_REFERENCES)
def test_the_reference_run_itself_flags_nothing(tmp_path: Path, name: str) -> None:
    ref = run_reference(name)
    (tmp_path / "out").mkdir()
    ref.run.save(tmp_path / "out" / "run.json")
    r = runner.invoke(app, ["compare", str(tmp_path / "out"), "--reference", name])
    assert r.exit_code == 0, r.output
    assert "outlier:" not in r.stderr
    sec = r.stdout.split(f"## Health check against the reference {name}\n", 1)[1]
    assert f"None flagged: every measured ceiling of B is within {DEFAULT_OUTLIER_PCT:g} % of the reference's" in sec
    assert "| A | " in r.stdout and f"| reference {name} |" in r.stdout  # the reference joined, as the baseline


@pytest.mark.parametrize("name", RUN_REFERENCES)
def test_a_ceiling_lowered_10_percent_is_flagged(tmp_path: Path, name: str) -> None:
    ref = run_reference(name)
    target = next(c for c in ref.run.ceilings if c.source == "measured" and c.kind == "compute")
    (tmp_path / "out").mkdir()
    lowered(ref.run, target.name, 0.9).save(tmp_path / "out" / "run.json")
    r = runner.invoke(app, ["compare", str(tmp_path / "out"), "--reference", name])
    assert r.exit_code == 1, r.output
    outliers = lines(r.stderr, "outlier: ")
    assert len(outliers) == 1
    assert outliers == [
        f"outlier: B: {target.name} {sig_figs(target.value * 0.9)} GFLOP/s is 10.0 % below the "
        f"reference {name}'s {sig_figs(target.value)} GFLOP/s"
    ]
    sec = r.stdout.split(f"## Health check against the reference {name}\n", 1)[1]
    assert len(lines(sec, f"| B | {target.name} | GFLOP/s |")) == 1 and "| 10.0 % |" in sec
    # a looser rule lets it pass
    r = runner.invoke(app, ["compare", str(tmp_path / "out"), "--reference", name, "--outlier-pct", "11"])
    assert r.exit_code == 0 and "outlier:" not in r.stderr


def test_the_kept_h200_run_against_h200() -> None:
    assert {"h100", "h200"} <= set(RUN_REFERENCES)
    r = runner.invoke(app, ["compare", str(DATA / "run_h200_default.json"), "--reference", "h200"])
    assert r.exit_code == 0 and "outlier:" not in r.stderr, r.output
    assert "None flagged: every measured ceiling of B is within 3 % of the reference's or above it." in r.stdout


def test_health_flags_missing_ceilings_and_partial_runs() -> None:
    ref = run_reference("h100")
    gone = ref.run.with_ceilings([c for c in ref.run.ceilings if c.name != "FP64"])
    partial = dataclasses.replace(ref.run, complete=False)
    flags = health_flags(ref, [gone, partial], ["B", "C"])
    assert [f.sentence() for f in flags] == [
        "B: no measured FP64, which the reference h100's run has",
        "C: INTERRUPTED — partial results",
    ]
    with pytest.raises(ValueError, match="out of range"):
        health_flags(ref, [gone], ["B"], outlier_pct=float("nan"))


def test_another_device_is_compared_but_not_checked(tmp_path: Path, m5_run: Run) -> None:
    m5_run.save(tmp_path / "run.json")
    r = runner.invoke(app, ["compare", str(tmp_path / "run.json"), "--reference", "h100"])
    assert r.exit_code == 0, r.output
    assert (
        "Not checked, another device than the reference's NVIDIA H100 80GB HBM3 (cuda): B (Apple M5, metal)" in r.stdout
    )
    assert "## Ceilings: ratios" in r.stdout and "outlier:" not in r.stderr


def test_baseline_stays_the_named_run_with_a_reference_run() -> None:
    r = runner.invoke(
        app,
        [
            "compare",
            str(DATA / "run_h100.json"),
            str(DATA / "run_h100_power.json"),
            "--reference",
            "h100",
            "--baseline",
            str(DATA / "run_h100_power.json"),
        ],
    )
    assert "Baseline: C." in r.stdout  # the reference is A, the named file C
    assert "| C | NVIDIA H100 80GB HBM3 (cuda) — 2026-11-24 | run_h100_power.json |" in r.stdout
    assert not lines(r.stderr, "outlier: B: ")  # the reference's own run passes; C is judged on its own
    assert r.exit_code == (1 if lines(r.stderr, "outlier: C: ") else 0)


def test_the_page_carries_the_published_figures(tmp_path: Path, m5_run: Run, m5_run_b: Run) -> None:
    m5_run.save(tmp_path / "m5.json")
    m5_run_b.save(tmp_path / "m4.json")
    r = runner.invoke(
        app,
        [
            "compare",
            str(tmp_path / "m5.json"),
            str(tmp_path / "m4.json"),
            "--reference",
            "m5-article",
            "-o",
            str(tmp_path / "c.html"),
        ],
    )
    assert r.exit_code == 0, r.output
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "<h2>Published figures: m5-article (not measured by this tool)</h2>" in page
    assert "Apple M5 GPU Roofline Analysis" in page
