"""The time budget of each suite of a roofline run (docs/design.md, "Time budgets").

Every suite already bounds its own cases (a GEMM ladder stops before a launch would pass its
``max_launch_s``, the sweep shrinks its working set once compute-bound), so a run's length follows
the device. The budget is the backstop: seconds of wall time a suite may spend, checked before each
case; once spent, its remaining cases are not measured, the run warns, and the report's "Time per
suite" table says "cut short by its budget". The defaults are several times what a suite takes on
an H100 and on a 2-core CPU, so a default run is never cut; ``--budget`` sets them.
"""

from __future__ import annotations

from typing import Dict, Mapping, Sequence

from ..study.budget import MAX_BUDGET_S, Budgets, defaults_text, parse_budgets

__all__ = ["SUITE_BUDGET_S", "QUICK_BUDGET_S", "MAX_BUDGET_S", "Budgets", "suite_budgets", "BUDGET_HELP"]

#: Seconds per suite of a default run (an H100 takes about a fifth of each, docs/design.md).
SUITE_BUDGET_S: Mapping[str, float] = {"stream": 30.0, "sweep": 60.0, "peak": 30.0, "gemm": 90.0, "idiv": 60.0,
                                       "matrix": 120.0, "access": 120.0, "occupancy": 60.0, "dualissue": 30.0,
                                       "hierarchy": 90.0}
#: Seconds per suite with ``quick``.
QUICK_BUDGET_S: Mapping[str, float] = {k: v / 3 for k, v in SUITE_BUDGET_S.items()}

#: ``run --budget``'s help: the default of every suite, from :data:`SUITE_BUDGET_S`.
BUDGET_HELP = ("Seconds each named suite may take, e.g. gemm=120,sweep=30 (up to "
               f"{MAX_BUDGET_S:g}), or none. A suite whose budget runs out stops before its next case and the "
               f"report says so. Default seconds: {defaults_text(SUITE_BUDGET_S)} (a third with --quick); none "
               "with --sustain or --power-window.")

def suite_budgets(suites: Sequence[str], quick: bool = False, budgets: Budgets = None) -> Dict[str, float]:
    """Seconds of budget for each of ``suites`` (0 for none): the defaults (:data:`SUITE_BUDGET_S`,
    :data:`QUICK_BUDGET_S` with ``quick``), with ``budgets`` applied: ``"none"`` (no budget for any
    suite), ``"gemm=120,sweep=30"`` or a mapping of suite to seconds; a suite named there but not in
    ``suites`` is an error, so is a value of 0 or less or above :data:`MAX_BUDGET_S`.

    Raises:
        OptionError: (option ``budget``) malformed text, an unknown suite, or a value out of range.
    """
    return parse_budgets(suites, QUICK_BUDGET_S if quick else SUITE_BUDGET_S, budgets)
