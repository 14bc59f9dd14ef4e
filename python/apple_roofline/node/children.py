"""Several measuring processes at once, one per device, each on its own share of the host's cores,
and the signals that stop them (docs/design/extending.md, "Every GPU of a node").

:func:`run_children` starts every :class:`Child` (a command line, its results folder, the CPUs it
may use), each in its own session so that the terminal's Ctrl-C reaches the parent alone. On Linux
each child's CPU affinity is its share (the native CPU backend and the host-side pools follow it);
everywhere its :data:`~apple_roofline.host.cpus.THREADS_ENV` and the BLAS/OpenMP thread variables say how
many threads it may use. A child's output goes to ``<out>/child.log``.

Ctrl-C (SIGINT) or SIGTERM to the parent is forwarded to every running child as SIGINT, the signal a
study answers by writing what it has measured with ``complete: false`` and exiting 130; a child
still running :data:`GRACE_S` seconds later is killed. The parent then returns every child's result
and the caller writes its node report from whatever files the children left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable, Dict, List, Mapping, Optional, Sequence

from ..host.cpus import POOL_ENVS, THREADS_ENV

__all__ = [
    "Child",
    "ChildResult",
    "GRACE_S",
    "LOG_NAME",
    "TICK_S",
    "split_cpus",
    "child_env",
    "run_children",
    "python_child",
    "last_line",
]

#: Seconds a child has to write its partial results after the stop signal, before it is killed.
GRACE_S = 60.0
#: Each child's stdout and stderr, in its results folder.
LOG_NAME = "child.log"
#: Seconds between two progress reports of the running children.
TICK_S = 30.0
_POLL_S = 0.2


@dataclass(frozen=True)
class Child:
    """One measuring process: ``name`` (its folder's name, ``cuda0``), ``argv`` (the command line),
    ``out`` (its results folder, created if missing) and ``cpus`` (the CPUs it may use; empty:
    all)."""

    name: str
    argv: Sequence[str]
    out: Path
    cpus: Sequence[int] = ()


@dataclass
class ChildResult:
    """How a child ended: ``returncode`` (negative: killed by that signal), ``wall_s`` (seconds from
    its start to its end), ``stopped`` (it was sent the stop signal) and ``killed`` (it outlived the
    grace period)."""

    child: Child
    returncode: int
    wall_s: float
    stopped: bool = False
    killed: bool = False
    log: Path = field(default_factory=Path)


def split_cpus(cpus: Sequence[int], n: int) -> List[List[int]]:
    """``cpus`` in ``n`` contiguous shares as equal as they can be (the first ones one larger);
    where there are fewer CPUs than children, the children share them round robin (one each).

    Raises:
        ValueError: ``n`` below 1 or no CPUs.
    """
    if n < 1 or not cpus:
        raise ValueError(f"cannot split {len(cpus)} CPUs {n} ways")
    if len(cpus) < n:
        return [[cpus[i % len(cpus)]] for i in range(n)]
    base, extra = divmod(len(cpus), n)
    out, start = [], 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        out.append(list(cpus[start : start + size]))
        start += size
    return out


def child_env(cpus: Sequence[int], env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """``env`` (default this process's) with the thread limits of a child on ``cpus``: one thread
    per CPU in :data:`~apple_roofline.host.cpus.THREADS_ENV` and the pools' variables; unchanged for an
    empty share (all CPUs)."""
    out = dict(os.environ if env is None else env)
    if cpus:
        for key in (THREADS_ENV, *POOL_ENVS):
            out[key] = str(len(cpus))
    return out


def _start(child: Child) -> "subprocess.Popen[bytes]":
    child.out.mkdir(parents=True, exist_ok=True)
    cpus = set(child.cpus)
    setaffinity = getattr(os, "sched_setaffinity", None)

    def pin() -> None:  # in the child, before exec: its share of the cores
        if cpus and setaffinity is not None:
            setaffinity(0, cpus)

    with open(child.out / LOG_NAME, "wb") as log:
        return subprocess.Popen(
            list(child.argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env(child.cpus),
            start_new_session=True,
            preexec_fn=pin,
        )


def run_children(
    children: Sequence[Child],
    *,
    grace_s: float = GRACE_S,
    on_exit: Optional[Callable[[ChildResult], None]] = None,
    on_tick: Optional[Callable[[Sequence[Child]], None]] = None,
    tick_s: float = TICK_S,
) -> List[ChildResult]:
    """Run ``children`` at the same time and wait for all of them (module docstring: shares, logs,
    signals). ``on_exit`` is called as each one ends, ``on_tick`` every ``tick_s`` seconds with the
    children still running (for progress). Returns one result per child, in order.

    Raises:
        OSError: a child could not be started (those already started are stopped first).
    """
    group = _Group(children, on_exit)
    next_tick = time.monotonic() + tick_s
    previous = {s: signal.signal(s, group.stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        group.start()
        while group.waiting():
            group.reap()
            group.kill_late(grace_s)
            if on_tick is not None and time.monotonic() >= next_tick:
                next_tick = time.monotonic() + tick_s
                running = group.running()
                if running:
                    on_tick(running)
            time.sleep(_POLL_S)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return [r for r in group.results if r is not None]


class _Group:
    """The children of one :func:`run_children` call: their processes, start instants and results
    (None while running), and when a stop was asked for (None until SIGINT or SIGTERM)."""

    def __init__(self, children: Sequence[Child], on_exit: Optional[Callable[[ChildResult], None]]) -> None:
        self.children, self.on_exit = children, on_exit
        self.procs: List["subprocess.Popen[bytes]"] = []
        self.starts: List[float] = []
        self.results: List[Optional[ChildResult]] = [None] * len(children)
        self.stop_at: Optional[float] = None

    def stop(self, signum: int, _frame: Optional[FrameType]) -> None:
        """The signal handler: on the first signal, SIGINT to every child still running."""
        if self.stop_at is None:
            self.stop_at = time.monotonic()
            for i, p in enumerate(self.procs):
                if self.results[i] is None and p.poll() is None:
                    _send(p, signal.SIGINT)

    def start(self) -> None:
        """Start every child, in order.

        Raises:
            OSError: a child could not be started; those already started were stopped and waited for.
        """
        try:
            for c in self.children:
                self.procs.append(_start(c))
                self.starts.append(time.monotonic())
        except OSError:
            self.stop(signal.SIGINT, None)
            for p in self.procs:
                p.wait()
            raise

    def waiting(self) -> bool:
        """Whether a child has no result yet."""
        return any(r is None for r in self.results)

    def running(self) -> List[Child]:
        """The children with no result yet, in order."""
        return [c for c, r in zip(self.children, self.results) if r is None]

    def finish(self, i: int, stopped: bool, killed: bool) -> None:
        """Child ``i``'s result from its ended process, then ``on_exit``."""
        r = ChildResult(
            self.children[i],
            int(self.procs[i].returncode),
            time.monotonic() - self.starts[i],
            stopped,
            killed,
            self.children[i].out / LOG_NAME,
        )
        self.results[i] = r
        if self.on_exit is not None:
            self.on_exit(r)

    def reap(self) -> None:
        """A result for each child that has ended since the last look."""
        for i, p in enumerate(self.procs):
            if self.results[i] is None and p.poll() is not None:
                self.finish(i, self.stop_at is not None, False)

    def kill_late(self, grace_s: float) -> None:
        """``grace_s`` after a stop was asked for, SIGKILL to each child still running, waited for."""
        if self.stop_at is not None and time.monotonic() - self.stop_at > grace_s:
            for i, p in enumerate(self.procs):
                if self.results[i] is None:
                    _send(p, signal.SIGKILL)
                    p.wait()
                    self.finish(i, True, True)


def _send(p: "subprocess.Popen[bytes]", sig: int) -> None:
    """``sig`` to the child's process group (its session: the child and anything it started)."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    except AttributeError:  # no process groups (Windows): the child alone
        if sig == signal.SIGKILL:
            p.kill()
        else:
            p.send_signal(sig)


def python_child(*args: str) -> List[str]:
    """The command line of this package's CLI in a child: ``<python> -m apple_roofline <args>``."""
    return [sys.executable, "-m", "apple_roofline", *args]


def last_line(child: Child, tail_bytes: int = 4096) -> str:
    """The last non-empty line of ``child``'s log so far (its latest progress), "" when none."""
    try:
        with open(child.out / LOG_NAME, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - tail_bytes))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.replace("\r", "\n").splitlines() if ln.strip()]
    return lines[-1] if lines else ""
