"""The time budgets and grid of a ``--quick`` run, sized from a prediction of each case's time on
the machine at hand (docs/design/budgets.md, "Time budgets"), so that a slow machine still measures every
case of every suite.

Each suite that describes its cases (:func:`~apple_roofline.suites.registry.case_work`) gets a
predicted time (:func:`~.predict.suite_seconds`) and a budget of :data:`QUICK_MARGIN` times it,
never less than its default quick budget (:func:`~.budget.default_budgets`), at most
:data:`~.budget.MAX_BUDGET_S`; the budget stays a backstop: a case that runs far beyond its
prediction can still cut its suite, said as any cut. Where the predicted total passes
:data:`QUICK_TARGET_S`, the grid shrinks by the steps of
:data:`~apple_roofline.suites.work.SHRINK_STEPS`, one at a time, until it fits or none is left.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Sequence

from ...suites import SuiteContext, registry
from ...suites.work import SHRINK_STEPS
from .budget import MAX_BUDGET_S
from .predict import Policy, Rates, suite_seconds

__all__ = ["QuickPlan", "plan_quick", "quick_budget", "QUICK_MARGIN", "QUICK_TARGET_S", "PLAN_KEY"]

#: The key of a quick run's plan in its journal's header and its results' ``device``
#: (:meth:`QuickPlan.record`): a resumed quick run measures the grid it started with, at its budgets.
PLAN_KEY = "quick_plan"

#: A suite's quick budget is this many times its predicted seconds (at least its default).
QUICK_MARGIN = 2.0
#: Seconds a quick run's suites should take together, as predicted; above it the grid shrinks.
QUICK_TARGET_S = 30.0


@dataclass(frozen=True)
class QuickPlan:
    """What a ``--quick`` run measures within what time.

    Attributes:
        shrink: the shrink steps taken (0 to ``len(SHRINK_STEPS)``): the suites' context option
            :data:`~apple_roofline.suites.work.QUICK_SHRINK_OPTION`.
        predicted_s: predicted seconds of each suite that describes its cases, at that grid.
        budgets_s: seconds of budget of every suite of the run.
    """

    shrink: int
    predicted_s: Mapping[str, float]
    budgets_s: Mapping[str, float]

    @property
    def total_s(self) -> float:
        """Predicted seconds of the suites that describe their cases, together."""
        return sum(self.predicted_s.values())

    def record(self, rates: Rates) -> Dict[str, Any]:
        """The plan as the journal's header and the results' ``device.quick_plan`` hold it: predicted
        seconds per suite (to 0.01 s), budgets in seconds, the shrink steps taken (their words,
        :data:`~apple_roofline.suites.work.SHRINK_STEPS`) and the probe's ``rates``."""
        return {
            "predicted_s": {name: round(s, 2) for name, s in self.predicted_s.items()},
            "budgets_s": dict(self.budgets_s),
            "shrink_steps": list(SHRINK_STEPS[: self.shrink]),
            "rates": {k: round(v, 3) for k, v in dataclasses.asdict(rates).items()},
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any], suites: Sequence[str]) -> "QuickPlan":
        """The plan of a quick run of ``suites`` that :meth:`record` gave (a resumed journal's).

        Raises:
            ValueError: one line naming what does not hold: a budget of a suite of ``suites`` missing
                or not a number of seconds, shrink steps that are not this version's first steps.
        """
        budgets, predicted, steps = record.get("budgets_s"), record.get("predicted_s", {}), record.get("shrink_steps")
        if not isinstance(budgets, Mapping) or not isinstance(predicted, Mapping) or not isinstance(steps, list):
            raise ValueError("quick_plan needs budgets_s, predicted_s and shrink_steps")
        for name in suites:
            value = budgets.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_BUDGET_S:
                raise ValueError(f"quick_plan.budgets_s.{name} must be 0 to {MAX_BUDGET_S:g} seconds, not {value!r}")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in predicted.values()):
            raise ValueError("quick_plan.predicted_s must map suites to seconds")
        if steps != list(SHRINK_STEPS[: len(steps)]):
            raise ValueError("quick_plan.shrink_steps are not this version's shrink steps (another version's journal)")
        return cls(
            len(steps),
            {str(k): float(v) for k, v in predicted.items()},
            {name: float(budgets[name]) for name in suites},
        )


def quick_budget(predicted_s: float, default_s: float) -> float:
    """A suite's quick budget, seconds: :data:`QUICK_MARGIN` × ``predicted_s`` rounded up to a whole
    second, at least ``default_s`` (its default quick budget), at most
    :data:`~.budget.MAX_BUDGET_S`; ``default_s`` where ``default_s`` is 0 (no budget)."""
    if default_s <= 0:
        return default_s
    return min(MAX_BUDGET_S, max(default_s, float(math.ceil(QUICK_MARGIN * predicted_s))))


def plan_quick(
    suites: Sequence[str],
    context: Callable[[int], SuiteContext],
    rates: Rates,
    policy: Policy,
    defaults: Mapping[str, float],
    target_s: float = QUICK_TARGET_S,
) -> QuickPlan:
    """The :class:`QuickPlan` of a quick run of ``suites``: ``context(shrink)`` gives the suites'
    context at a shrink level; ``defaults`` the default quick budget of each suite (0: none). The
    smallest shrink level whose predicted total is at most ``target_s``, else the last one.

    Raises:
        KeyError: a suite of ``suites`` that is not registered, or missing from ``defaults``.
    """
    predicted: Dict[str, float] = {}
    shrink = 0
    for shrink in range(len(SHRINK_STEPS) + 1):
        ctx = context(shrink)
        predicted = {}
        for name in suites:
            works = registry.case_work(name, ctx)
            if works:
                predicted[name] = suite_seconds(works, rates, policy)
        if sum(predicted.values()) <= target_s:
            break
    budgets = {
        name: quick_budget(predicted[name], defaults[name]) if name in predicted else defaults[name] for name in suites
    }
    return QuickPlan(shrink, predicted, budgets)
