"""``run`` and ``dispatch`` on a device list (``--device cuda:all``, ``cuda:0,2,3``): one child
process per GPU at once (:mod:`apple_roofline.node`), then DIR/node.md and DIR/node.json.

The children run the same command with the same options — rebuilt from the parsed ones, so they
are exactly what this process checked — and ``--device <GPU> --out DIR/<cuda0 ...>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Sequence

import typer

from ..errors import OptionError
from .common import EXIT_FAILED, EXIT_INTERRUPTED, fail, fail_option, os_reason

if TYPE_CHECKING:
    from ..devices import DeviceSpec
    from ..node.runner import NodeResult

__all__ = ["OUTLIER_HELP", "child_args", "parse_outlier_pct", "run_on_node"]

OUTLIER_HELP = (
    "With a device list (cuda:all, cuda:0,2,3): flag a GPU more than this many percent worse than the "
    "node's median on any ceiling."
)
_NOT_PASSED = ("device", "out", "outlier_pct", "resume")


def child_args(ctx: typer.Context, skip: Sequence[str] = _NOT_PASSED) -> List[str]:
    """The options of the command being run, as a command line (each option that differs from its
    default, by its longest flag), without those named in ``skip``."""
    args: List[str] = []
    for p in ctx.command.params:
        if getattr(p, "param_type_name", "") != "option" or p.name in skip or p.name is None:
            continue
        value = ctx.params.get(p.name)
        if value is None or value == p.default or p.expose_value is False:
            continue
        flag = max(p.opts, key=len)
        if getattr(p, "is_flag", False):
            if value:
                args.append(flag)
            elif p.secondary_opts:
                args.append(max(p.secondary_opts, key=len))
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def parse_outlier_pct(text: str) -> float:
    """``--outlier-pct``'s text as the library checks it (:func:`~apple_roofline.node.report.check_outlier_pct`:
    a finite number, 0 or more); exits 2 with its one line otherwise. Every command that takes the option
    calls this before anything is measured, with or without a device list."""
    from ..node.report import check_outlier_pct

    try:
        return check_outlier_pct(text)
    except OptionError as exc:
        fail_option(exc)


def run_on_node(ctx: typer.Context, device: str, out: Path, outlier_pct: float, results_file: str) -> None:
    """Measure every GPU of ``device`` (a device list) at once with ``ctx``'s command, each child writing
    ``out/<cuda0 ...>/``; then ``out``/node.md and node.json, a line per GPU and per outlier. Exit
    0 when every child succeeded and no GPU is an outlier, 1 otherwise, 130 when stopped. Progress:
    a line per GPU as it starts and ends, and each running GPU's latest progress line every 30 s."""
    from ..node import measure_node, node_children

    specs = _device_specs(device)
    command = str(ctx.info_name or ctx.command.name)
    resume = ctx.params.get("resume")
    if resume is not None:  # each GPU's child continues from its own journal, DIR/<cuda0 ...>
        out = Path(resume)
    children = node_children(specs, command, child_args(ctx), out, resume=resume is not None)
    for c in children:
        typer.echo(
            f"{c.name}: {command} on {c.argv[c.argv.index('--device') + 1]}, CPUs "
            f"{','.join(map(str, c.cpus))}, log {c.out / 'child.log'}",
            err=True,
        )
    try:
        node = measure_node(
            children,
            results_file,
            out,
            devices=[str(s) for s in specs],
            outlier_pct=outlier_pct,
            on_exit=_child_done,
            on_tick=_children_running,
        )
    except OSError as exc:
        fail(f"node run in {out}: {os_reason(exc)}", EXIT_FAILED)
    _print_node(node, len(children))


def _device_specs(device: str) -> List["DeviceSpec"]:
    """The GPUs of the device list ``device`` (:func:`~apple_roofline.node.parse_device_list`); exits 2
    when it is malformed, 1 when the native extension cannot be imported."""
    from ..node import parse_device_list

    try:
        return parse_device_list(device)
    except OptionError as exc:
        fail_option(exc)
    except ImportError as exc:
        fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)


def _child_done(r: object) -> None:
    """The line of a child that exited (a :class:`~apple_roofline.node.ChildResult`), on stderr."""
    from ..node import ChildResult

    assert isinstance(r, ChildResult)
    typer.echo(
        f"{r.child.name}: exit {r.returncode} after {r.wall_s:.1f} s"
        + (" (stopped)" if r.stopped else "")
        + (" (killed)" if r.killed else ""),
        err=True,
    )


def _children_running(running: Sequence[object]) -> None:
    """Each running child's latest progress line (or ``starting``), on stderr."""
    from ..node.children import Child, last_line

    for c in running:
        assert isinstance(c, Child)
        typer.echo(f"{c.name}: {last_line(c) or 'starting'}", err=True)


def _print_node(node: "NodeResult", gpus: int) -> None:
    """The node run's summary: its GPUs and their status, the outliers and the files written; exits
    130 when a child was stopped, 1 when one failed or a GPU is an outlier."""
    typer.echo(f"{gpus} GPUs in {node.wall_s:.1f} s")
    for m in node.members:
        typer.echo(f"  {m.name} ({m.device}, PCI {m.pci_bus_id or 'unknown'}): {m.status}")
    for o in node.outliers:
        typer.echo(f"outlier: {o.sentence().replace('**', '')}")
    for p in node.written:
        typer.echo(f"wrote {p}")
    if any(r.stopped for r in node.results):
        raise typer.Exit(EXIT_INTERRUPTED)
    if node.outliers or any(r.returncode != 0 for r in node.results):
        raise typer.Exit(EXIT_FAILED)
