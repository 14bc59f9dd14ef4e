"""Provenance recorded in every results file: the host, the time, the tool and its git revision.

Every kind of study records the same block (docs/design.md, "Results files"), so a number read back
later says where and when it was measured and by which build. Nothing here imports the native
extension: the git revision comes from ``_build_info.py``, which CMake writes at build time.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import sys
from typing import Any, Dict, Optional

from ._version import __version__

__all__ = ["TOOL_NAME", "host", "now", "git_revision", "tool_version"]

#: The name every results file records as its producing tool.
TOOL_NAME = "apple_roofline"


def host() -> Dict[str, Any]:
    """The host as a JSON-ready dict: ``hostname``, ``os`` (``platform.platform()``), ``machine``,
    ``python`` and ``numpy`` versions, ``logical_cpus`` (``os.cpu_count()``), and the share of them
    this process had: ``usable_cpus`` and ``host_threads`` (:mod:`apple_roofline.cpus`)."""
    import numpy as np

    from .cpus import host_threads, usable_cpus

    return {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(usable_cpus()),
        "host_threads": host_threads(),
    }


def now() -> str:
    """The local time, ISO 8601 with its UTC offset, to the second (``2026-11-24T10:15:02+01:00``)."""
    return _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def git_revision() -> Optional[str]:
    """The git revision the installed extension was built from (``-dirty`` appended when the
    checkout had changes), or None when it is unknown (no git at build time, no ``_build_info``)."""
    try:
        from ._build_info import GIT_REVISION
    except ImportError:
        return None
    return GIT_REVISION or None


def tool_version() -> str:
    """The package version (``apple_roofline.__version__``)."""
    return __version__
