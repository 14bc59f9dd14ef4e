"""Provenance recorded in every results file: the host, the time, the tool and its git revision.

Every kind of study records the same block (docs/design/files.md, "Results files"), so a number read back
later says where and when it was measured and by which build. Nothing here imports the native
extension: the git revision comes from ``_build_info.py``, which CMake writes at build time from
the project's own checkout only (never from a repository the source merely sits in).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import subprocess
import sys
from typing import Any, Dict, Optional, Union

from .._version import __version__

__all__ = ["TOOL_NAME", "SOURCE_DIR", "host", "now", "git_revision", "checkout_revision", "tool_version"]

#: The name every results file records as its producing tool.
TOOL_NAME = "apple_roofline"


def host() -> Dict[str, Any]:
    """The host as a JSON-ready dict: ``hostname``, ``os`` (``platform.platform()``), ``machine``,
    ``python`` and ``numpy`` versions, ``logical_cpus`` (``os.cpu_count()``), and the share of them
    this process had: ``usable_cpus`` and ``host_threads`` (:mod:`apple_roofline.host.cpus`)."""
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


def checkout_revision(source_dir: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """The git revision of ``source_dir`` (``-dirty`` appended when tracked files differ from it)
    when it is the top level of its own git checkout, else None: a copy of the source inside
    another repository (an unpacked sdist in a monorepo, a vendored copy, a virtual environment in
    a repository) must not record that repository's commit. No git, or a failing one, is None.
    The same rule as the build's (cmake/git_revision.cmake)."""

    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(
                ["git", "-C", os.fspath(source_dir), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    toplevel = git("rev-parse", "--show-toplevel")
    if not toplevel or os.path.realpath(toplevel) != os.path.realpath(source_dir):
        return None
    head = git("rev-parse", "HEAD")
    if not head:
        return None
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + ("-dirty" if dirty else "")


#: The source tree this package runs from when it is not installed (``PYTHONPATH=python`` in a
#: checkout): the directory holding ``python/apple_roofline``.
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def git_revision() -> Optional[str]:
    """The git revision the installed extension was built from (``_build_info.py``, written by
    CMake from the project's own checkout only: cmake/git_revision.cmake), or None when it is
    unknown (the source was not its own git checkout; the version, :func:`tool_version`, then says
    what was built). Without ``_build_info`` (the package run from a source tree that was never
    built), the revision of that tree when it is its own checkout (:func:`checkout_revision`)."""
    try:
        from .._build_info import GIT_REVISION
    except ImportError:
        if not os.path.isfile(os.path.join(SOURCE_DIR, "CMakeLists.txt")):
            return None  # installed without a build record: no source tree to ask
        return checkout_revision(SOURCE_DIR)
    return GIT_REVISION or None


def tool_version() -> str:
    """The package version (``apple_roofline.__version__``)."""
    return __version__
