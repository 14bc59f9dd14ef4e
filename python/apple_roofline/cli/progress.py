"""Progress on stderr: a Rich progress bar per stage on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional

import typer

__all__ = ["CliProgress", "stderr_is_terminal"]


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (Rich bars then; plain lines in logs and pipes)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class CliProgress:
    """The runner's progress protocol, drawn on stderr.

    ``start(suite, total)``, ``advance(description)`` (one kernel done),
    ``finish(suite)``. With a terminal on stderr each suite gets a Rich
    progress bar; otherwise one plain line per event. Use as a context
    manager so the bar is torn down on errors.
    """

    def __init__(self, rich: Optional[bool] = None) -> None:
        self._rich = stderr_is_terminal() if rich is None else rich
        self._bar: Any = None
        self._tasks: Dict[str, Any] = {}
        self._totals: Dict[str, int] = {}
        self._done: Dict[str, int] = {}
        self._current: Optional[str] = None
        if self._rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.fields[suite]:<6}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=False,
            )

    def __enter__(self) -> "CliProgress":
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the progress display (idempotent)."""
        if self._bar is not None:
            self._bar.stop()

    def start(self, suite: str, total: int) -> None:
        """A suite of ``total`` steps begins."""
        self._current = suite
        self._totals[suite] = total
        self._done[suite] = 0
        if self._bar is not None:
            self._tasks[suite] = self._bar.add_task("", total=max(total, 0), suite=suite)
        else:
            typer.echo(f"[{suite}] {total} step{'s' if total != 1 else ''}", err=True)

    def advance(self, description: str) -> None:
        """One step of the current suite is done; ``description`` names it."""
        suite = self._current
        if suite is None:
            return
        self._done[suite] = self._done.get(suite, 0) + 1
        if self._bar is not None:
            self._bar.update(self._tasks[suite], advance=1, description=description)
        else:
            typer.echo(f"[{suite}] {self._done[suite]}/{self._totals.get(suite, 0)} {description}", err=True)

    def finish(self, suite: str, note: str = "") -> None:
        """The suite is over: ``done``, or where it ended before its total, the steps done of the total
        and ``note`` (``"[stream] 3/4, cut short by its 10 s budget"``): a count never claims the
        steps that were not made."""
        done, total = self._done.get(suite, 0), self._totals.get(suite, 0)
        if self._bar is not None and suite in self._tasks:
            task = self._tasks[suite]
            if note:
                self._bar.update(task, completed=done, description=note)
            else:
                self._bar.update(task, completed=total, description="done")
        elif self._bar is None:
            typer.echo(f"[{suite}] {done}/{total}, {note}" if note else f"[{suite}] done", err=True)
        if self._current == suite:
            self._current = None
