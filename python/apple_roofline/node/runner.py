"""A study on several GPUs of this host at once: the children, their results, the node report.

:func:`node_children` makes one :class:`~.children.Child` per device — this package's own command
line (``run`` or ``dispatch``) with the same options, ``--device <that GPU>`` and ``--out
DIR/<cuda0 ...>`` — each on an equal share of the usable CPUs (:func:`~.children.split_cpus`).
:func:`measure_node` runs any children (the seam the tests use with CPU children) and then reads
what each left in its folder, whole or partial, and writes ``node.md`` and ``node.json``
(:mod:`.report`).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..devices import DeviceSpec
from ..host.cpus import usable_cpus
from ..study.files import ResultsError
from .children import Child, ChildResult, python_child, run_children, split_cpus
from .devices import child_name
from .report import DEFAULT_OUTLIER_PCT, Member, Outlier, find_outliers, nvml_serials, with_serials, write_node_report

__all__ = ["NodeResult", "node_children", "measure_node"]


@dataclass(frozen=True)
class NodeResult:
    """What :func:`measure_node` left: the ``members`` (one per child), their ``outliers``, the
    files written, the children's ``results`` and the ``wall_s`` of the whole."""

    members: List[Member]
    outliers: List[Outlier]
    written: List[Path]
    results: List[ChildResult]
    wall_s: float


def node_children(
    specs: Sequence[DeviceSpec],
    command: str,
    args: Sequence[str],
    out: Path,
    cpus: Optional[Sequence[int]] = None,
    *,
    resume: bool = False,
) -> List[Child]:
    """One child per device of ``specs``: ``<python> -m apple_roofline <command> <args> --device
    <spec> --out <out>/<cuda0 ...>`` (``--resume <out>/<cuda0 ...>`` instead of ``--out`` with
    ``resume``: each child continues from its own journal), on its share of ``cpus`` (default: the
    usable CPUs)."""
    shares = split_cpus(list(cpus) if cpus is not None else usable_cpus(), len(specs))
    where = "--resume" if resume else "--out"
    return [
        Child(
            child_name(s),
            python_child(command, *args, "--device", str(s), where, str(out / child_name(s))),
            out / child_name(s),
            share,
        )
        for s, share in zip(specs, shares)
    ]


def _member(child: Child, result: ChildResult, results_file: str, out: Path, device: str) -> Member:
    from ..results import load_results

    path = child.out / results_file
    try:
        rel = str(path.relative_to(out))
    except ValueError:
        rel = str(path)
    if not path.exists():
        why = "killed" if result.killed else f"exit {result.returncode}"
        return Member(
            child.name, device, None, "", result.returncode, result.wall_s, note=f"{why}; see {child.out / 'child.log'}"
        )
    try:
        doc = load_results(path)
    except ResultsError as exc:
        return Member(child.name, device, None, rel, result.returncode, result.wall_s, note=str(exc))
    return Member(child.name, device, doc, rel, result.returncode, result.wall_s)


def measure_node(
    children: Sequence[Child],
    results_file: str,
    out: Path,
    *,
    devices: Optional[Sequence[str]] = None,
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    title: str = "",
    on_exit: Optional[Callable[[ChildResult], None]] = None,
    on_tick: Optional[Callable[[Sequence[Child]], None]] = None,
) -> NodeResult:
    """Run ``children`` at once (:func:`~.children.run_children`: Ctrl-C and SIGTERM stop them all,
    each keeping its partial results), read each one's ``results_file`` from its folder and write
    the node report into ``out`` (:func:`~.report.write_node_report`; serials from NVML by PCI bus
    id). ``devices`` names each child's device in the report (default: the child's name);
    ``on_exit`` and ``on_tick`` are :func:`~.children.run_children`'s.

    Raises:
        OSError: a child could not be started, or the report could not be written.
    """
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    results = run_children(children, on_exit=on_exit, on_tick=on_tick)
    wall = time.monotonic() - start
    names = list(devices) if devices is not None else [c.name for c in children]
    members = [_member(c, r, results_file, out, d) for c, r, d in zip(children, results, names)]
    members = with_serials(members, nvml_serials([m.pci_bus_id for m in members]))
    written = write_node_report(out, members, outlier_pct, title=title or socket.gethostname(), wall_s=wall)
    return NodeResult(members, find_outliers(members, outlier_pct), written, results, wall)
