"""Progress on stderr: Rich progress bars on a terminal (one for the whole study, "suite k of n" with
the time left, and one per stage), plain lines otherwise (docs/design/measurement.md, "Progress")."""

from __future__ import annotations

import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import typer

__all__ = ["CliProgress", "stderr_is_terminal", "time_left", "clock_text", "plan_words"]


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (Rich bars then; plain lines in logs and pipes)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def time_left(budgets_s: Sequence[float], index: int, elapsed_s: float, done: int, total: int) -> Optional[float]:
    """Seconds a study of stages with ``budgets_s`` (0: none) has left while stage ``index`` has run
    ``elapsed_s`` and done ``done`` of its at most ``total`` steps: this stage's rate so far times
    its steps left, at most its budget left, plus the budgets of the stages after it (each stage
    stops once its budget is spent, so those are upper bounds). None when nothing bounds it: a
    stage ahead without a budget, or this one with neither a step done nor a budget."""
    budget = budgets_s[index]
    bounds = [max(budget - elapsed_s, 0.0)] if budget > 0 else []
    if done > 0:
        bounds.append(elapsed_s / done * max(total - done, 0))
    later = list(budgets_s[index + 1 :])
    if not bounds or any(b <= 0 for b in later):
        return None
    return min(bounds) + sum(later)


def clock_text(seconds: float) -> str:
    """``"1:05"``, ``"1:02:05"``: seconds as a clock reading, rounded up to the second."""
    s = int(-(-seconds // 1))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def plan_words(stages: Sequence[str], budgets_s: Sequence[float], predicted_s: Sequence[float]) -> str:
    """``"[all] predicted about 12 s: stream 2.1 s (budget 10), sweep 4.0 s (budget 20), …"``: each
    stage with a predicted time (above 0) and its budget; "" when none has one."""
    parts = [
        f"{stage} {p:.1f} s" + (f" (budget {b:g})" if b > 0 else "")
        for stage, b, p in zip(stages, budgets_s, predicted_s)
        if p > 0
    ]
    if not parts:
        return ""
    return f"[all] predicted about {sum(p for p in predicted_s if p > 0):.0f} s: " + ", ".join(parts)


class CliProgress:
    """The runner's progress protocol, drawn on stderr.

    ``start(stage, total)`` (``total`` an upper bound: an adaptive suite, the GEMM size ladder,
    stops early), ``advance(description)`` (one step done), ``finish(stage)``; and, where the
    runner announces them, ``plan(stages, budgets_s)`` (the stages to come: an overall "suite k of
    n" with the time left, :func:`time_left`) and ``doing(description)`` (what the current stage
    is doing before its next step ends: allocating its buffers, measuring a case). With a terminal
    on stderr each stage gets a Rich progress bar that ends at the steps it took; otherwise one
    plain line per event (``[stage] k/total description``; ``doing`` prints nothing there). Use
    as a context manager so the bars are torn down on errors.
    """

    def __init__(self, rich: Optional[bool] = None) -> None:
        self._rich = stderr_is_terminal() if rich is None else rich
        self._bar: Any = None
        self._tasks: Dict[str, Any] = {}
        self._totals: Dict[str, int] = {}
        self._done: Dict[str, int] = {}
        self._current: Optional[str] = None
        self._stages: List[str] = []
        self._budgets: List[float] = []
        self._overall: Any = None
        self._started = 0.0
        if self._rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.fields[suite]:<9}", markup=False),  # names and messages: text, not markup
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}", markup=False),
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

    def plan(self, stages: Sequence[str], budgets_s: Sequence[float], predicted_s: Sequence[float] = ()) -> None:
        """The study will run ``stages`` in this order, each within its budget (seconds; 0: none);
        where ``predicted_s`` gives a stage's predicted seconds (above 0), one line says them with
        the budgets (:func:`plan_words`)."""
        self._stages, self._budgets = list(stages), [float(b) for b in budgets_s]
        words = plan_words(self._stages, self._budgets, predicted_s)
        if words:
            if self._bar is not None:
                self._bar.console.print(words, markup=False, highlight=False)
            else:
                typer.echo(words, err=True)
        if self._bar is not None and len(self._stages) > 1:
            self._overall = self._bar.add_task("", total=len(self._stages), suite="all")

    def _overall_words(self) -> str:
        """``"suite 2 of 6: sweep, up to 1:52 left"`` (no time where nothing bounds it)."""
        stage = self._current
        if stage is None or stage not in self._stages:
            return ""
        k = self._stages.index(stage)
        left = time_left(
            self._budgets, k, time.monotonic() - self._started, self._done.get(stage, 0), self._totals.get(stage, 0)
        )
        return f"suite {k + 1} of {len(self._stages)}: {stage}" + (
            f", up to {clock_text(left)} left" if left is not None else ""
        )

    def _show_overall(self) -> None:
        if self._bar is not None and self._overall is not None:
            self._bar.update(self._overall, description=self._overall_words())

    def start(self, stage: str, total: int) -> None:
        """A stage of at most ``total`` steps begins."""
        self._current = stage
        self._totals[stage] = total
        self._done[stage] = 0
        self._started = time.monotonic()
        if self._bar is not None:
            self._tasks[stage] = self._bar.add_task("", total=max(total, 0), suite=stage)
            self._show_overall()
            return
        if stage in self._stages and len(self._stages) > 1:
            typer.echo(f"[all] {self._overall_words()}", err=True)
        typer.echo(f"[{stage}] up to {total} step{'s' if total != 1 else ''}", err=True)

    def doing(self, description: str) -> None:
        """The current stage is busy with ``description`` (shown on its bar; no plain line)."""
        stage = self._current
        if self._bar is not None and stage is not None and stage in self._tasks:
            self._bar.update(self._tasks[stage], description=description)

    def advance(self, description: str) -> None:
        """One step of the current stage is done; ``description`` names it."""
        stage = self._current
        if stage is None:
            return
        self._done[stage] = self._done.get(stage, 0) + 1
        if self._bar is not None:
            self._bar.update(self._tasks[stage], advance=1, description=description)
            self._show_overall()
        else:
            typer.echo(f"[{stage}] {self._done[stage]}/{self._totals.get(stage, 0)} {description}", err=True)

    def finish(self, stage: str, note: str = "") -> None:
        """The stage is over: its bar ends at the steps it took (fewer than its total where an
        adaptive suite stopped early), "done"; a stage ended before its planned steps for a reason
        (``note``: ``"cut short by its 10 s budget"``) keeps its total and says why
        (``"[stream] 3/4, cut short by its 10 s budget"``): a count never claims steps not made."""
        done, total = self._done.get(stage, 0), self._totals.get(stage, 0)
        if self._bar is not None and stage in self._tasks:
            if note:
                self._bar.update(self._tasks[stage], completed=done, description=note)
            else:
                self._bar.update(self._tasks[stage], total=done, completed=done, description="done")
            if self._overall is not None and stage in self._stages:
                last = stage == self._stages[-1]
                self._bar.update(self._overall, advance=1, **({"description": "done"} if last else {}))
        elif self._bar is None:
            typer.echo(
                f"[{stage}] {done}/{total}, {note}"
                if note
                else f"[{stage}] done: {done} step{'s' if done != 1 else ''}",
                err=True,
            )
        if self._current == stage:
            self._current = None
