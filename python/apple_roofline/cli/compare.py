"""``apple-roofline compare RUN.json...``: two or more saved runs side by side (:mod:`..roofline.compare`).

Arguments are files, folders (every ``run.json`` under them, the file ``run`` writes) or glob patterns
(``'results/**/run.json'``, expanded here too, so that a quoted pattern works on every shell). A file named
twice is compared twice: a run against itself is a check of the comparison (every ratio 1.00), its second copy
labelled ``run.json (2)``. Every file is read before anything is printed; each one that is not a roofline run,
or whose schema version differs from the first run's, is named on its own line and the command exits 2.

``--reference NAME`` (one of ``--list-references``, :mod:`..references`) compares one run or more
with a reference: published figures are set beside the runs of their chip (and with ``-o`` drawn as
ceilings beside them, labelled published: :func:`~..references.published_lines`); a measured reference run
joins the comparison as its baseline (unless ``--baseline`` says otherwise) and the runs of its kind
of device are checked against it with the node run's outlier rule: each flag is also a line on
stderr, and the command exits 1 when there is one.
"""

from __future__ import annotations

import dataclasses
import glob
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, List, Optional, Sequence, Tuple

import typer

from ..node.report import DEFAULT_OUTLIER_PCT
from ..study.files import ResultsError
from ..text import one_line
from .common import EXIT_FAILED, EXIT_USAGE, PLOT_SUFFIXES, check_writable_dir, fail, os_reason, save_plot
from .node import parse_outlier_pct

if TYPE_CHECKING:
    from ..references import HealthFlag, Reference
    from ..roofline.compare.compare import Baseline, Comparison, PublishedLine
    from ..roofline.model.run import Run

__all__ = ["compare", "expand_paths", "load_runs", "RUN_FILE", "HTML_SUFFIX"]

#: The results file of a roofline run, looked for under a folder argument.
RUN_FILE = "run.json"
#: ``-o`` with this suffix writes the HTML page; the figure suffixes write the figure.
HTML_SUFFIX = ".html"
_GLOB = set("*?[")


def expand_paths(args: Sequence[str], name: str = RUN_FILE) -> Tuple[List[Path], List[str]]:
    """The files named by ``args`` in order: a file as given; a folder as every ``name`` under it
    (sorted); a pattern with ``*``, ``?`` or ``[`` that is not a path as its matches (``**`` spans
    folders; folders among them expanded as above), each file once per argument. A file that two
    arguments name is kept twice (``compare a.json a.json`` compares a run with itself). Also one
    line per argument that names nothing (no such file, a folder without ``name``, a pattern
    without a match)."""
    out: List[Path] = []
    problems: List[str] = []
    for arg in args:
        mine: List[Path] = []
        path = Path(arg)
        if path.exists():
            matches = [path]
        elif _GLOB & set(arg):
            matches = [Path(m) for m in sorted(glob.glob(arg, recursive=True))]
            if not matches:
                problems.append(f"{arg}: the pattern matches no file")
        else:
            problems.append(f"{arg}: no such file or folder")
            matches = []
        for m in matches:
            files = sorted(m.rglob(name)) if m.is_dir() else [m]
            if m.is_dir() and not files:
                problems.append(f"{m}: the folder holds no {name}")
            mine += [f for f in files if f.resolve() not in {o.resolve() for o in mine}]
        out += mine
    return out, problems


def load_runs(paths: Sequence[Path]) -> Tuple[List["Run"], List[str]]:
    """Each file read as a roofline run, and one line per file that is not one: unreadable or
    rejected by its reader (:class:`~apple_roofline.study.files.ResultsError`), of another kind, or
    of a schema version other than the first run's."""
    from ..results import load_results
    from ..roofline.model.run import Run

    runs: List[Run] = []
    problems: List[str] = []
    for path in paths:
        try:
            doc = load_results(path)
        except ResultsError as exc:
            problems.append(str(exc))
            continue
        if not isinstance(doc, Run):
            problems.append(
                f"{path}: a {doc.DESCRIPTION} (kind {doc.KIND!r}), not a roofline run "
                f"(kind {Run.KIND!r}); compare takes roofline runs"
            )
        elif runs and doc.schema_version != runs[0].schema_version:
            problems.append(
                f"{path}: schema version {doc.schema_version}, the first run's is "
                f"{runs[0].schema_version}; runs of different schema versions are not compared"
            )
        else:
            runs.append(doc)
    return runs, problems


def _baseline(option: Optional[str], paths: List[Path]) -> "Baseline":
    """``--baseline``: None -> the first run; ``median``; or a file, added in front when it is not
    among the runs."""
    from ..roofline.compare.compare import BASELINE_MEDIAN

    if option is None:
        return 0
    if option == BASELINE_MEDIAN:
        return BASELINE_MEDIAN
    target = Path(option)
    if not target.is_file():
        fail(
            f"--baseline {option!r} is neither a file nor {BASELINE_MEDIAN!r} (valid: a results file among "
            f"the runs or another one, or {BASELINE_MEDIAN})",
            EXIT_USAGE,
        )
    for i, p in enumerate(paths):
        if p.resolve() == target.resolve():
            return i
    paths.insert(0, target)
    return 0


def _list_references(runs: Optional[List[str]], reference: Optional[str]) -> None:
    """``--list-references``: the references as a Markdown table on stdout; exits 2 when runs or a
    ``--reference`` were given too."""
    from ..references import references_table
    from ..roofline.views.report import table_lines

    if runs or reference is not None:
        fail("--list-references takes no runs and no --reference", EXIT_USAGE)
    typer.echo("\n".join(["# References", ""] + table_lines(references_table())))


def _reference(name: str) -> "Reference":
    """``--reference NAME`` loaded; exits 2 naming the valid names for an unknown one."""
    from ..references import load_reference

    try:
        return load_reference(name)
    except ValueError as exc:  # unknown name (ResultsError, a broken installation, is one too)
        fail(f"--reference: {exc}", EXIT_USAGE if not isinstance(exc, ResultsError) else EXIT_FAILED)


def _comparison(
    loaded: List["Run"],
    paths: List[Path],
    base: "Baseline",
    base_given: bool,
    ref: Optional["Reference"],
    outlier_pct: float,
) -> Tuple["Comparison", List["HealthFlag"]]:
    """The comparison of the loaded runs with the reference's sections, and its health-check flags:
    a reference run goes first (its label ``reference NAME``), the baseline unless ``--baseline``
    named another."""
    from ..references import RunReference, reference_sections
    from ..roofline.compare.compare import Comparison, path_labels, run_tags

    labels = path_labels(paths)
    if ref is None:
        return Comparison(tuple(loaded), tuple(labels), base), []
    if isinstance(ref, RunReference):
        runs = [ref.run] + loaded
        tags = run_tags(len(runs))
        sections, flags = reference_sections(ref, loaded, tags[1:], outlier_pct)
        shifted = base + 1 if base_given and isinstance(base, int) else (base if base_given else 0)
        return Comparison(
            tuple(runs), (f"reference {ref.name}",) + tuple(labels), shifted, ref.name, tuple(sections)
        ), flags
    sections, flags = reference_sections(ref, loaded, run_tags(len(loaded)), outlier_pct)
    return Comparison(tuple(loaded), tuple(labels), base, ref.name, tuple(sections)), flags


def compare(
    runs: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="RUN.json",
            help="Two or more roofline runs (one is enough with --reference): files, folders (every run.json "
            "under them) or glob patterns.",
        ),
    ] = None,
    baseline: Annotated[
        Optional[str],
        typer.Option(
            "--baseline",
            metavar="FILE|median",
            help="The run the ratios are to (default: the first), or `median`: the median of the runs, per ceiling.",
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Also write the overlaid rooflines: a figure (.png, .svg, .pdf) or an HTML page "
            "(.html: the interactive figure with arrows from the baseline, the static one, the tables); with "
            "--reference of published figures, their ceilings beside the runs (one run is enough), labelled published.",
        ),
    ] = None,
    theoretical: Annotated[
        bool,
        typer.Option("--theoretical", help="Draw the theoretical ceilings too (faint); by default only measured ones."),
    ] = False,
    reference: Annotated[
        Optional[str],
        typer.Option(
            "--reference",
            metavar="NAME",
            help="Compare with a reference (see --list-references): published figures beside the runs of their chip, "
            "or a known-good run of a GPU that the runs of its kind are checked against (exit 1 on an outlier).",
        ),
    ] = None,
    list_references: Annotated[
        bool,
        typer.Option("--list-references", help="List the references --reference takes, with their sources, and exit."),
    ] = False,
    outlier_pct: Annotated[
        str,
        typer.Option(
            "--outlier-pct",
            metavar="PCT",
            help="With a reference run: flag a measured ceiling more than this many percent below the reference's.",
        ),
    ] = f"{DEFAULT_OUTLIER_PCT:g}",
) -> None:
    """Compare two or more saved runs, of any devices: a Markdown table of every ceiling in every run
    and its ratio to a baseline on stdout and, with -o, the rooflines overlaid (a colour per ceiling, a line
    style per run).
    With --reference, one run is enough: published figures are set beside it (and drawn beside it with -o),
    or it is checked against a reference run.
    A native run (CUDA, Metal) and a WebGPU run of one GPU also get each measured ceiling side by side;
    a native figure below 0.8x WebGPU's is named on stderr as a native-path defect."""
    from ..references import PublishedReference, published_lines
    from ..roofline.compare.compare import compare_markdown
    from ..roofline.compare.paths import native_defects

    if list_references:
        _list_references(runs, reference)
        return
    pct = parse_outlier_pct(outlier_pct)
    ref = _reference(reference) if reference is not None else None
    _check_output_suffix(output)
    paths, base, loaded = _runs_to_compare(runs or [], baseline, ref)
    published = published_lines(ref, loaded) if isinstance(ref, PublishedReference) else ()
    _check_output(output, loaded, ref, published)
    comparison, flags = _comparison(loaded, paths, base, baseline is not None, ref, pct)
    comparison = dataclasses.replace(comparison, published=published)
    text = compare_markdown(comparison)
    typer.echo(text, nl=not text.endswith("\n"))
    for flag in flags:
        typer.echo(f"outlier: {flag.sentence()}", err=True)
    for line in native_defects(comparison.runs, comparison.tags):
        typer.echo(f"native-path defect: {line}", err=True)
    if len(comparison.runs) > len(loaded):  # a reference run joined the comparison, first
        paths, loaded = [Path(comparison.labels[0])] + paths, list(comparison.runs)
    if output is None:
        raise typer.Exit(EXIT_FAILED if flags else 0)
    if output.suffix.lower() == HTML_SUFFIX:
        _write_html(comparison, output, theoretical)
    else:
        _write_figure(comparison, paths, loaded, output, theoretical)
    typer.echo(f"wrote {output}", err=True)
    if flags:
        raise typer.Exit(EXIT_FAILED)


def _check_output_suffix(output: Optional[Path]) -> None:
    """Exits 2 when ``-o`` has a suffix that is neither a figure's (:data:`~.common.PLOT_SUFFIXES`) nor
    :data:`HTML_SUFFIX`."""
    if output is not None and output.suffix.lower() not in PLOT_SUFFIXES + (HTML_SUFFIX,):
        fail(
            f"-o {str(output)!r} has an unsupported suffix {output.suffix or '(none)'!r} "
            f"(valid: {', '.join(PLOT_SUFFIXES + (HTML_SUFFIX,))})",
            EXIT_USAGE,
        )


def _runs_to_compare(
    runs: List[str], baseline: Optional[str], ref: Optional["Reference"]
) -> Tuple[List[Path], "Baseline", List["Run"]]:
    """The files the arguments name (:func:`expand_paths`, the ``--baseline`` file added in front where
    it is not among them: :func:`_baseline`), the baseline, and the runs read from them
    (:func:`load_runs`). Exits 2 naming every argument that names nothing and every file that is no
    run of the first one's schema, each on its own line, or when there are too few runs (two, or one
    with ``--reference``)."""
    paths, problems = expand_paths(runs)
    base = _baseline(baseline, paths)
    loaded, bad = load_runs(paths)
    problems = list(dict.fromkeys(problems + bad))  # a file named twice has its problem said once
    if problems:  # every one named, each on its own line
        for line in problems[:-1]:
            typer.echo(f"error: {one_line(line)}", err=True)
        fail(problems[-1], EXIT_USAGE)
    if len(loaded) < (1 if ref is not None else 2):
        need = "one run or more with --reference" if ref is not None else "two or more runs"
        fail(f"compare needs {need}, got {len(loaded)} ({', '.join(map(str, paths)) or 'none'})", EXIT_USAGE)
    return paths, base, loaded


def _check_output(
    output: Optional[Path], loaded: Sequence["Run"], ref: Optional["Reference"], published: Sequence["PublishedLine"]
) -> None:
    """With ``-o``: exits 2 when one run is to be drawn beside a published reference that has no
    ceilings of its chip (and no reference run joins it), else when ``output``'s folder cannot be
    written (:func:`~.common.check_writable_dir`)."""
    from ..references import RunReference

    if output is None:
        return
    if len(loaded) < 2 and not isinstance(ref, RunReference) and not published:
        assert ref is not None
        fail(
            f"-o draws the run beside the published ceilings of {ref.name}, which has none for "
            f"{loaded[0].device_name} ({loaded[0].backend}) (valid: a run of {', '.join(ref.chips)}; without -o "
            "the tables list its figures)",
            EXIT_USAGE,
        )
    check_writable_dir(output)


def _write_html(comparison: "Comparison", output: Path, theoretical: bool) -> None:
    """``-o FILE.html``: the comparison's page (:func:`~apple_roofline.roofline.compare.compare_html.compare_html`),
    written atomically; exits 1 when it cannot be drawn or written."""
    from ..roofline.compare.compare_html import compare_html
    from ..study.files import write_text_atomic

    try:
        page = compare_html(comparison, theoretical=theoretical)
    except ValueError as exc:
        fail(f"cannot draw the comparison: {exc}", EXIT_FAILED)
    try:
        write_text_atomic(output, page)
    except OSError as exc:
        fail(f"cannot write {output}: {os_reason(exc)}", EXIT_FAILED)


def _write_figure(
    comparison: "Comparison", paths: Sequence[Path], loaded: Sequence["Run"], output: Path, theoretical: bool
) -> None:
    """``-o FILE.png|.svg|.pdf``: the overlaid rooflines
    (:func:`~apple_roofline.roofline.compare.compare_plot.plot_compare`) with the comparison's note on
    partial runs; exits 1 naming the runs (``paths``, in the order of ``loaded``) that have no
    roofline."""
    from ..figures import add_note
    from ..roofline.compare.compare import partial_note
    from ..roofline.compare.compare_plot import plot_compare
    from ..roofline.views.tables import model_of

    models = [model_of(r) for r in loaded]
    missing = [str(p) for p, m in zip(paths, models) if m is None]
    if missing:
        fail(
            f"cannot plot the comparison: {', '.join(missing)} has no roofline "
            "(it needs a bandwidth and a compute ceiling)",
            EXIT_FAILED,
        )
    save_plot(
        lambda: add_note(
            plot_compare(
                [m for m in models if m is not None],
                comparison.names(),
                theoretical=theoretical,
                published=comparison.published,
                reference=comparison.reference,
            ),
            partial_note(comparison),
        ),
        output,
        "cannot plot the comparison",
    )
