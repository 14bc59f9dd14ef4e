"""Results files that cannot lie (docs/design/files.md, "Results files"): a saved file of every kind of
study, corrupted field by field, is rejected by the one strict reader with one line naming the
field and the valid range, and ``plot`` and ``report`` exit 2 with that line: no traceback, no
figure, no report. Every other hostile value a reader accepts must still be drawn and reported
without a traceback.

The files are tests/unit/data's: real runs (run_epyc_2vcpu, graphics_h100, dispatch_paired_epyc_2vcpu,
calls_epyc_2vcpu) and three synthetic files marked as test data (tune_synthetic, engines_synthetic:
the tune study needs a GPU, the engines study macOS; kernels_synthetic, the embedding API's file).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from typer.testing import CliRunner

from apple_roofline.cli.app import app
from apple_roofline.results import KINDS, load_results, parse_results
from apple_roofline.study import ResultsError

DATA = Path(__file__).parent / "data"
cli = CliRunner()

#: One saved file of each kind.
FILES: Dict[str, str] = {
    "roofline": "run_epyc_2vcpu.json",
    "dispatch": "dispatch_paired_epyc_2vcpu.json",
    "graphics": "graphics_h100.json",
    "calls": "calls_epyc_2vcpu.json",
    "engines": "engines_synthetic.json",
    "tune": "tune_synthetic.json",
    "kernels": "kernels_synthetic.json",
}

#: Per kind, where its first timed record lives, its samples, a stored median (None where the kind
#: stores none beside its samples: engines), a time, a count and a count that must be an integer.
Path_ = Tuple[Any, ...]
FIELDS: Dict[str, Dict[str, Any]] = {
    "roofline": dict(
        samples=("measurements", 0, "samples_s"),
        median=("measurements", 0, "median_s"),
        time=("measurements", 0, "min_s"),
        count=("measurements", 0, "flops"),
        integer=("measurements", 0, "bytes"),
    ),
    "dispatch": dict(
        samples=("series", 0, "samples_s"),
        median=("series", 0, "distribution", "p50"),
        time=("series", 0, "distribution", "max"),
        count=("series", 0, "launches_per_sample"),
        integer=("series", 0, "distribution", "n"),
    ),
    "graphics": dict(
        samples=("measurements", 0, "samples_s"),
        median=("measurements", 0, "median_s"),
        time=("measurements", 0, "max_s"),
        count=("measurements", 0, "params", "pixels_drawn"),
        integer=("measurements", 0, "params", "pixels_shaded"),
    ),
    "calls": dict(
        samples=("measurements", 0, "samples_s"),
        median=("measurements", 0, "distribution", "p50"),
        time=("measurements", 0, "distribution", "min"),
        count=("measurements", 0, "batch"),
        integer=("measurements", 0, "flops"),
    ),
    "engines": dict(
        samples=("points", 0, "native", "samples_s"),
        median=None,
        time=("points", 0, "native", "load_s"),
        count=("points", 0, "flops"),
        integer=("points", 0, "native", "warmup"),
    ),
    "tune": dict(
        samples=("measurements", 0, "samples_s"),
        median=("measurements", 0, "median_s"),
        time=("measurements", 0, "max_s"),
        count=("rejected", 0, "block"),
        integer=("measurements", 0, "params", "block"),
    ),
    "kernels": dict(
        samples=("kernels", 0, "samples_s"),
        median=("kernels", 0, "seconds"),
        time=("kernels", 0, "seconds"),
        count=("kernels", 0, "n"),
        integer=("kernels", 0, "n"),
    ),
}


def _original(kind: str) -> Dict[str, Any]:
    data = json.loads((DATA / FILES[kind]).read_text())
    assert isinstance(data, dict)
    return data


def _get(d: Any, path: Path_) -> Any:
    for p in path:
        d = d[p]
    return d


def _set(d: Any, path: Path_, value: Any) -> None:
    _get(d, path[:-1])[path[-1]] = value


def _name(path: Path_) -> str:
    """``("measurements", 0, "median_s")`` -> ``measurements[0].median_s``, as messages name it."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _corruptions() -> List[Tuple[str, str, Path_, Any, str]]:
    """(kind, what, field, value, the message's text after the field) for every kind."""
    out: List[Tuple[str, str, Path_, Any, str]] = []
    for kind, f in FIELDS.items():
        samples = (*f["samples"], 0)
        out += [
            (kind, "NaN", samples, float("nan"), "must be a finite number, not NaN"),
            (kind, "inf", f["time"], float("inf"), "must be a finite number, not Infinity"),
            (kind, "-inf", samples, float("-inf"), "must be a finite number, not -Infinity"),
            (
                kind,
                "negative time",
                f["time"],
                -1,
                "must be a non-negative number of seconds, not -1"
                if kind == "engines"
                else "must be a positive number of seconds, not -1",
            ),
            (kind, "negative sample", samples, -1e-6, "must be a positive number of seconds, not -1e-06"),
            (kind, "negative count", f["count"], -1, "integer"),
            (kind, "float count", f["integer"], 2.5, "integer"),
            (kind, "huge count", f["count"], 10**40, "an integer of 41 digits (valid: "),
        ]
        if f["median"] is not None:
            out.append((kind, "median outside samples", f["median"], "10x", "lies outside samples_s (valid: "))
            out.append((kind, "negative median", f["median"], -1, "must be a positive number of seconds, not -1"))
    return out


CORRUPTIONS = _corruptions()


def _corrupted(kind: str, field: Path_, value: Any) -> Dict[str, Any]:
    d = _original(kind)
    if value == "10x":  # ten times the largest sample
        samples = FIELDS[kind]["samples"]
        value = 10 * max(_get(d, samples))
    _set(d, field, value)
    return d


def test_every_kind_has_a_file_and_it_reads() -> None:
    assert set(FILES) == set(KINDS) == set(FIELDS)
    for kind, name in FILES.items():
        assert load_results(DATA / name).KIND == kind


@pytest.mark.parametrize("kind, what, field, value, message", CORRUPTIONS, ids=[f"{c[0]}-{c[1]}" for c in CORRUPTIONS])
def test_a_corrupted_field_is_one_line_naming_it(
    tmp_path: Path, kind: str, what: str, field: Path_, value: Any, message: str
) -> None:
    path = tmp_path / FILES[kind]
    path.write_text(json.dumps(_corrupted(kind, field, value)))  # NaN and inf as JSON's NaN, Infinity
    with pytest.raises(ResultsError) as e:
        load_results(path)
    text = str(e.value)
    assert text.startswith(f"{path}: {_name(field)}") and message in text and "\n" not in text, text
    for command in (["plot", str(path), "-o", str(tmp_path / "fig.png")], ["report", str(path)]):
        result = cli.invoke(app, command)
        assert result.exit_code == 2, (command, result.output)
        assert result.output == f"error: {text}\n", result.output  # one line, the reader's
        assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "fig.png").exists()


def test_the_issue_s_median_s_minus_one(tmp_path: Path) -> None:
    """The table's case: a run whose measurement says ``median_s: -1`` was drawn; now it is refused."""
    d = _original("roofline")
    d["measurements"][2]["median_s"] = -1
    path = tmp_path / "run.json"
    path.write_text(json.dumps(d))
    want = f"error: {path}: measurements[2].median_s must be a positive number of seconds, not -1\n"
    for command in (["plot", str(path)], ["report", str(path)]):
        result = cli.invoke(app, command)
        assert (result.exit_code, result.output) == (2, want)
    assert not (tmp_path / "roofline.png").exists()


@pytest.mark.parametrize(
    "text, field",
    [
        ('"median_s": 1e999', "median_s must be a finite number, not Infinity"),  # overflows a double
        ('"median_s": -1e999', "median_s must be a finite number, not -Infinity"),
        ('"median_s": NaN', "median_s must be a finite number, not NaN"),
    ],
)
def test_non_finite_text_is_named_by_its_field(tmp_path: Path, text: str, field: str) -> None:
    raw = (DATA / FILES["roofline"]).read_text()
    key = '"median_s": '
    start = raw.index(key)
    end = raw.index(",", start)
    path = tmp_path / "run.json"
    path.write_text(raw[:start] + text + raw[end:])
    with pytest.raises(ResultsError, match=rf"measurements\[0\]\.{field}$"):
        load_results(path)


@pytest.mark.parametrize("levels", [33, 995, 100_000])
def test_nesting_too_deep_is_one_line(tmp_path: Path, levels: int) -> None:
    """Arrays nested 100 000 deep made the JSON parser raise RecursionError (a traceback); nesting
    that parses but is deeper than any results file would exhaust the readers' recursion."""
    path = tmp_path / "deep.json"
    path.write_text('{"kind": "roofline", "host": ' + "[" * levels + "]" * levels + "}")
    want = f"error: {path}: nested too deeply to be a results file (valid: at most 32 levels)\n"
    for command in (["plot", str(path)], ["report", str(path)], ["compare", str(path), str(path)]):
        result = cli.invoke(app, command)
        assert (result.exit_code, result.output) == (2, want), command


def test_a_dict_given_to_a_reader_is_checked_the_same_way() -> None:
    for kind, f in FIELDS.items():
        field = (*f["samples"], 0)
        with pytest.raises(ResultsError) as e:
            parse_results(_corrupted(kind, field, float("nan")))
        assert str(e.value) == f"<dict>: {_name(field)} must be a finite number, not NaN"


def _numbers(d: Any, path: Path_ = ()) -> List[Path_]:
    """Every numeric leaf of ``d`` (booleans aside)."""
    if isinstance(d, dict):
        return [p for k, v in d.items() for p in _numbers(v, (*path, k))]
    if isinstance(d, list):
        return [p for i, v in enumerate(d) for p in _numbers(v, (*path, i))]
    return [path] if isinstance(d, (int, float)) and not isinstance(d, bool) else []


def _first_records(d: Dict[str, Any]) -> Dict[str, Any]:
    """The file with its arrays of records cut to their first two entries (the fuzz below visits
    every number of what is left); a dispatch study keeps its first pairing and the three series it
    needs (the device clock's, then the native and python series it pairs)."""
    d = copy.deepcopy(d)
    for key in (
        "measurements",
        "series",
        "points",
        "rejected",
        "skipped",
        "ceilings",
        "suite_times",
        "models",
        "pairings",
    ):
        if isinstance(d.get(key), list):
            d[key] = d[key][: 1 if key == "pairings" else 3 if key == "series" else 2]
    return d


#: The report of each kind but the roofline run: its module and function (``report``'s).
REPORTS: Dict[str, Tuple[str, str]] = {
    "dispatch": ("dispatch.report", "format_dispatch"),
    "graphics": ("graphics.report", "format_graphics"),
    "calls": ("calls.report", "format_calls"),
    "engines": ("engines.report", "format_engines"),
    "tune": ("tuning.report", "format_tune"),
    "kernels": ("user_kernels.report", "format_kernels"),
}
HOSTILE: Tuple[Any, ...] = (-1, 0, 2.5, 1e-320, 1e308, 10**19, -1e-9)


@pytest.mark.parametrize("kind", list(FILES))
def test_every_number_of_every_kind_is_checked_or_harmless(kind: str, tmp_path: Path) -> None:
    """Each number of a (shortened) file of each kind, set in turn to each hostile value: the
    reader either rejects it with one line naming the field, or accepts it, and then the report
    (every format) is still written without a traceback."""
    from importlib import import_module

    base = _first_records(_original(kind))
    accepted = rejected = 0
    for path in _numbers(base):
        for value in HOSTILE:
            d = copy.deepcopy(base)
            _set(d, path, value)
            try:
                doc = parse_results(d, source="f.json")
            except ResultsError as exc:
                text = str(exc)
                assert text.startswith("f.json: ") and "\n" not in text, text
                rejected += 1
                continue
            accepted += 1
            if kind in REPORTS:
                module, name = REPORTS[kind]
                fmt_fn: Callable[[Any, str], str] = getattr(import_module(f"apple_roofline.{module}"), name)
                for fmt in ("md", "csv", "json"):
                    assert isinstance(fmt_fn(doc, fmt), str), (path, value, fmt)
            else:
                from apple_roofline.roofline.views.report import to_csv, to_markdown

                assert to_markdown(doc) and to_csv(doc)  # type: ignore[arg-type]
    assert rejected and accepted, (rejected, accepted)


#: The kinds whose timed records are a roofline Measurement, whose rates are bounded by MAX_RATE.
RATED = ("roofline", "graphics", "tune")


@pytest.mark.parametrize("kind", list(FILES))
def test_the_extreme_samples_a_reader_accepts_are_drawn_and_reported(kind: str, tmp_path: Path) -> None:
    """The range's ends (a femtosecond, 1e9 s) in the first record's samples: accepted, and ``plot``
    and ``report`` finish without a traceback (exit 0, or 1 with one line where there is nothing to
    draw). A measurement (:data:`RATED`) counts one FLOP and one byte, so that its rate at a
    femtosecond (1e6 GFLOP/s, GB/s) stays within any device's (``study.reader.MAX_RATE``; at its own
    counts it is refused: test_read_files.py)."""
    d = _first_records(_original(kind))
    samples = _get(d, FIELDS[kind]["samples"])
    samples[:] = [1e-15] * (len(samples) - 1) + [1e9]
    record = _get(d, FIELDS[kind]["samples"][:-1])
    for key in ("median_s", "min_s", "max_s", "iqr_s", "cv", "gflops", "gbps", "distribution", "seconds"):
        record.pop(key, None)  # derived: recomputed from the samples
    if kind in RATED:
        record.update(flops=1, bytes=1)
        record.pop("intensity", None)
    d.pop("fits", None)
    path = tmp_path / FILES[kind]
    path.write_text(json.dumps(d))
    load_results(path)
    for command in (["plot", str(path), "-o", str(tmp_path / "fig.png")], ["report", str(path)]):
        result = cli.invoke(app, command)
        # 0, or 1 by the CLI's own exit (CliRunner keeps its SystemExit(1)); never 2 (the reader accepted
        # the file) nor an exception of the command's own (CliRunner: exit 1 with that exception)
        assert result.exit_code in (0, 1), (command, result.exit_code, result.output)
        if result.exit_code == 0:
            assert result.exception is None, (command, result.exception)
        else:
            assert isinstance(result.exception, SystemExit) and result.exception.code == 1, (command, result.exception)
            assert result.output.count("\n") == 1 and result.output.startswith("error: "), result.output


@pytest.mark.parametrize(
    "kind, field, value, message",
    [
        ("roofline", ("device", "memory_bytes"), -1, "must be a non-negative integer (a count), not -1 (valid: 0 to"),
        ("roofline", ("host", "logical_cpus"), -2, "must be a non-negative integer (a count), not -2 (valid: 0 to"),
        ("graphics", ("params", "spin_up_s"), -0.25, "must be a non-negative number of seconds, not -0.25"),
        (
            "graphics",
            ("params", "budgets_s"),
            {"texture": -1},
            "params.budgets_s.texture must be a non-negative number of seconds, not -1",
        ),
        ("graphics", ("measurements", 0, "params", "lead_s"), -1, "must be a non-negative number of seconds, not -1"),
        ("engines", ("models", 0, "build_s"), -1, "must be a non-negative number of seconds, not -1"),
        (
            "engines",
            ("models", 0, "weight_bytes_in_model"),
            1,
            "models[0].accounting_ok must be false: the model holds 1 weight bytes and 131072 are counted",
        ),
        ("calls", ("params", "budget_s"), -1.0, "must be a non-negative number of seconds, not -1.0"),
        ("calls", ("fits", 0, "rms_rel"), -1, "must be a non-negative number, not -1"),
        ("calls", ("measurements", 0, "flops"), 514, "is not the FLOPs of a 1×16² call (valid: 2·B·N² = 512)"),
        ("dispatch", ("params", "reps"), -3, "must be a non-negative integer (a count), not -3"),
        ("roofline", ("ceilings", 0, "value"), -5, "must be a positive number of GB/s, not -5"),
    ],
)
def test_settings_header_and_derived_records_obey_the_same_rules(
    tmp_path: Path, kind: str, field: Path_, value: Any, message: str
) -> None:
    d = _original(kind)
    _set(d, field, value)
    path = tmp_path / FILES[kind]
    path.write_text(json.dumps(d))
    result = cli.invoke(app, ["report", str(path)])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"error: {path}: ") and message in result.output, result.output
