"""The references this package ships (package data under ``references/data``): their names, how
to load one, and the table ``apple-roofline compare --list-references`` prints.

The index ``data/references.json`` lists each reference once: ``name`` (what ``--reference``
takes), ``kind`` (``"published"``: :class:`~.published.PublishedReference`; ``"run"``: one of this
project's runs, :class:`~.runs.RunReference`, with its ``description`` and ``provenance``) and the
``file`` beside the index that holds it.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Dict, List, Mapping, Union

from ..roofline.model.run import Run
from ..study.files import REFERENCE_CAP, ResultsError, parse_results_json, read_results_text
from ..study.table import Table
from ..text import DASH
from .published import PublishedReference
from .runs import RunReference

__all__ = ["Reference", "REFERENCE_KINDS", "reference_names", "load_reference", "references_table"]

#: A reference: published figures or one of this project's runs.
Reference = Union[PublishedReference, RunReference]
#: The kinds of the index, each in words.
REFERENCE_KINDS: Dict[str, str] = {"published": "published figures", "run": "measured run (this project)"}
_INDEX = "references.json"


def _data(name: str) -> str:
    """The text of the package's reference file ``name``, read as every input file is
    (:func:`~apple_roofline.study.files.read_results_text`, capped at :data:`REFERENCE_CAP`)."""
    with resources.as_file(resources.files(__package__).joinpath("data").joinpath(name)) as path:
        return read_results_text(path, REFERENCE_CAP, "reference file")


def _index() -> List[Mapping[str, Any]]:
    entries: List[Mapping[str, Any]] = parse_results_json(_data(_INDEX), source=_INDEX)["references"]
    return entries


def reference_names() -> List[str]:
    """The names ``--reference`` takes, in the index's order (published figures, then runs)."""
    return [str(e["name"]) for e in _index()]


def load_reference(name: str) -> Reference:
    """The reference called ``name`` (:func:`reference_names`).

    Raises:
        ValueError: no reference has that name (the message lists the valid names).
        ~apple_roofline.study.files.ResultsError: its packaged data does not read (a broken
            installation).
    """
    for e in _index():
        if e["name"] != name:
            continue
        file, kind = str(e["file"]), str(e["kind"])
        source = f"apple_roofline/references/data/{file}"
        if kind == "published":
            ref = PublishedReference.from_dict(parse_results_json(_data(file), source=source), source=source)
            if ref.name != name:
                raise ResultsError(f"{source}: name {ref.name!r} is not the index's {name!r}")
            return ref
        return RunReference(
            name, str(e["description"]), str(e["provenance"]), Run.from_json(_data(file), source=source)
        )
    raise ValueError(f"no reference is called {name!r} (valid: {', '.join(reference_names())})")


def references_table() -> Table:
    """Every reference, one row each: name, kind (:data:`REFERENCE_KINDS`), what it is for (the
    chips of published figures, the device of a run), and its source (the citation, or the run's
    own provenance)."""
    rows = []
    for name in reference_names():
        ref = load_reference(name)
        if isinstance(ref, PublishedReference):
            rows.append(
                (
                    name,
                    REFERENCE_KINDS[ref.KIND],
                    ", ".join(ref.chips) or DASH,
                    f"{ref.source.citation()}: {len(ref.figures)} figures. {ref.description}",
                )
            )
        else:
            rows.append(
                (name, REFERENCE_KINDS[ref.KIND], ref.device, f"{ref.recorded()}. {ref.description} {ref.provenance}")
            )
    return Table(
        ("Reference", "Kind", "For", "Source"),
        tuple(rows),
        "llll",
        (
            "Published figures are what their source states, never measured by this tool; a run "
            "reference is one of this project's own runs, kept as recorded.",
        ),
    )
