"""Every GPU of a node at once (``run --device cuda:all``, ``cuda:0,2,3``; ``dispatch`` the same).

* :mod:`.devices` — device lists (``cuda:all``, ``cuda:0,2,3``) and each device's folder name;
* :mod:`.children` — the child processes: a share of the host's cores each, their logs, and the
  parent's forwarding of Ctrl-C and SIGTERM to every child (each keeps its partial results);
* :mod:`.report` — node.md and node.json: the per-GPU table and the outliers, with PCI bus id and
  serial;
* :mod:`.runner` — the children of a device list, and a node run from start to report.

Beyond one node the tool uses an existing scheduler, not code of its own: docs/cluster.md.
"""

from __future__ import annotations

from .children import Child, ChildResult, run_children, split_cpus
from .devices import child_name, is_device_list, parse_device_list
from .report import DEFAULT_OUTLIER_PCT, Member, Outlier, find_outliers, node_markdown, write_node_report
from .runner import NodeResult, measure_node, node_children

__all__ = [
    "Child",
    "ChildResult",
    "run_children",
    "split_cpus",
    "child_name",
    "is_device_list",
    "parse_device_list",
    "DEFAULT_OUTLIER_PCT",
    "Member",
    "Outlier",
    "find_outliers",
    "node_markdown",
    "write_node_report",
    "NodeResult",
    "measure_node",
    "node_children",
]
