"""``--kernels FILE``: your kernels on the roofline of ``plot``, ``report`` and ``run``.

The three options every such command takes (:data:`KernelsOption`, :data:`KernelsMatchOption`,
:data:`KernelsMinShareOption`), the file read once before anything is measured or drawn
(:func:`load_kernels_option`: exit 2 for a file that is neither a kernels file nor an Nsight
Compute raw CSV export, with one line), the check that the file's device is the run's
(:func:`kernels_for_run`, ``--kernels-any-device``: :data:`KernelsAnyDeviceOption`), and the table
``plot`` prints (:func:`print_placements`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, List, Optional

import typer

from ..text import text_table
from .common import EXIT_USAGE, fail, warn

if TYPE_CHECKING:
    from ..user_kernels.model import KernelSet

__all__ = [
    "KernelsOption",
    "KernelsMatchOption",
    "KernelsMinShareOption",
    "KernelsAnyDeviceOption",
    "load_kernels_option",
    "kernels_for_run",
    "print_placements",
]

KernelsOption = Annotated[
    Optional[Path],
    typer.Option(
        "--kernels",
        metavar="FILE",
        help="Put your kernels on the roofline: a kernels file (apple_roofline.save_kernels) or an Nsight Compute "
        "export (ncu --csv --page raw): one dot per kernel and level, sized by time, with the ceiling that binds it.",
    ),
]
KernelsMatchOption = Annotated[
    Optional[List[str]],
    typer.Option(
        "--kernels-match",
        metavar="PATTERN",
        help="Only the kernels whose name contains PATTERN (or matches it as a glob with * ? [); repeatable.",
    ),
]
KernelsMinShareOption = Annotated[
    str,
    typer.Option(
        "--kernels-min-share",
        metavar="PCT",
        help="Only the kernels taking at least PCT % of the file's kernel time (0 to 100).",
    ),
]
KernelsAnyDeviceOption = Annotated[
    bool,
    typer.Option(
        "--kernels-any-device",
        help="Place the kernels of --kernels FILE even when it was profiled on another device than the run's "
        "(every view then says so); without it such a file is refused.",
    ),
]


def load_kernels_option(path: Optional[Path], match: Optional[List[str]], min_share: str) -> "Optional[KernelSet]":
    """The kernels of ``--kernels`` filtered by ``--kernels-match`` and ``--kernels-min-share``;
    None without ``--kernels``. Exits 2 with one line for a file that cannot be read as either
    kind, a share outside 0 to 100, or a filter option without ``--kernels``; warns when the filter
    leaves no kernel."""
    from ..study.files import ResultsError
    from ..user_kernels.load import load_kernels

    try:
        share = float(min_share)
    except ValueError:
        share = math.nan
    if not (0.0 <= share <= 100.0):
        fail(f"--kernels-min-share {min_share!r} is not a percentage (valid: 0 to 100)", EXIT_USAGE)
    if path is None:
        if match or share > 0:
            fail("--kernels-match and --kernels-min-share filter the kernels of --kernels FILE; give it", EXIT_USAGE)
        return None
    try:
        kernels = load_kernels(path)
    except ResultsError as exc:
        fail(f"--kernels: {exc}", EXIT_USAGE)
    picked = kernels.filtered(tuple(match or ()), share / 100.0)
    if not picked.kernels():
        warn(f"--kernels: no kernel of {path} is left by the filter (it has {len(kernels.kernels())})")
    return picked


def kernels_for_run(kernels: "Optional[KernelSet]", device_name: str, any_device: bool) -> "Optional[KernelSet]":
    """The kernels to place on a run of ``device_name``: refused (exit 2, one line naming both
    devices) when the file names another device, unless ``any_device`` (``--kernels-any-device``):
    then marked so that every view says they ran elsewhere
    (:meth:`~apple_roofline.user_kernels.model.KernelSet.on_other_device`). Exits 2 for
    ``--kernels-any-device`` without ``--kernels``."""
    if kernels is None:
        if any_device:
            fail("--kernels-any-device places the kernels of --kernels FILE; give it", EXIT_USAGE)
        return None
    if not kernels.ran_elsewhere(device_name):
        return kernels
    if not any_device:
        fail(
            f"--kernels: {kernels.source} ran on {kernels.device}, this run on {device_name}: its kernels would be "
            f"judged against another device's ceilings (place them anyway with --kernels-any-device)",
            EXIT_USAGE,
        )
    return kernels.on_other_device()


def print_placements(model: Any, kernels: "KernelSet") -> None:
    """One line per dot (kernel, level, precision, time share, FLOP/B, GFLOP/s, the ceiling that
    binds it, the share of the attainable reached, the speedup left), then the kernels not placed
    and why."""
    from ..roofline.views.kernel_dots import short_name
    from ..user_kernels.place import place
    from ..user_kernels.tables import device_banner, placements_table, unplaced_table

    placed = place(model, kernels)
    banner = device_banner(placed)
    if banner:  # on stdout, above the numbers it qualifies
        typer.echo(f"warning: {banner}")
    table = placements_table(placed)
    keep = (0, 1, 2, 3, 4, 5, 8, 10, 11)
    rows = [[short_name(r[0])] + [r[i] for i in keep[1:]] for r in table.rows]
    for line in text_table([table.header[i] for i in keep], rows):
        typer.echo(line)
    for u in unplaced_table(kernels).rows:
        typer.echo(f"not placed: {short_name(u[0])}" + (f" ({u[1]})" if u[1] != "all" else "") + f": {u[2]}")
