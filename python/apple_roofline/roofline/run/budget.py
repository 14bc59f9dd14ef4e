"""The time budget of each suite of a roofline run (docs/design/budgets.md, "Time budgets").

Every suite already bounds its own cases (a GEMM ladder stops before a launch would pass its
``max_launch_s``, the sweep shrinks its working set once compute-bound), so a run's length follows
the device. The budget is the backstop: seconds of wall time a suite may spend, checked before each
case; once spent, its remaining cases are not measured, the run warns, and the report's "Time per
suite" table says "cut short by its budget". The defaults are several times what a suite takes on
an H100 and on a 2-core CPU, so a default run is never cut; ``--budget`` sets them. A ``--quick``
run sizes its budgets from a prediction of its time on the machine at hand, never below a third of
these (:mod:`.quick_plan`).
"""

from __future__ import annotations

from typing import Dict, Sequence

from ...study.budget import MAX_BUDGET_S, Budgets, defaults_text, parse_budgets
from ...suites import registry

__all__ = ["MAX_BUDGET_S", "Budgets", "default_budgets", "suite_budgets", "budget_help"]


def default_budgets(quick: bool = False) -> Dict[str, float]:
    """Seconds per suite of a default run, from each suite's registration
    (:attr:`~apple_roofline.suites.registry.SuiteSpec.budget_s`; an H100 takes about a fifth of each,
    docs/design/budgets.md, "Time budgets"), a third of that with ``quick``; in run order."""
    return {name: seconds / 3 if quick else seconds for name, seconds in registry.budgets_s().items()}


def budget_help() -> str:
    """``run --budget``'s help: the default of every suite (:func:`default_budgets`)."""
    return (
        "Seconds each named suite may take, e.g. gemm=120,sweep=30 (up to "
        f"{MAX_BUDGET_S:g}), or none. A suite whose budget runs out stops before its next case and the "
        f"report says so. Default seconds: {defaults_text(default_budgets())} (a third with --quick, or twice "
        "the time predicted on this machine where that is more); none "
        "with --sustain or --power-window."
    )


def suite_budgets(suites: Sequence[str], quick: bool = False, budgets: Budgets = None) -> Dict[str, float]:
    """Seconds of budget for each of ``suites`` (0 for none): the defaults (:func:`default_budgets`,
    with ``quick`` a third), with ``budgets`` applied: ``"none"`` (no budget for any
    suite), ``"gemm=120,sweep=30"`` or a mapping of suite to seconds; a suite named there but not in
    ``suites`` is an error, so is a value of 0 or less or above :data:`MAX_BUDGET_S`.

    Raises:
        OptionError: (option ``budget``) malformed text, an unknown suite, or a value out of range.
    """
    return parse_budgets(suites, default_budgets(quick), budgets)
