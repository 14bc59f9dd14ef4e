"""Per-suite time budgets, shared by every study that measures suites against one (docs/design/budgets.md,
"Time budgets"): a study keeps its own default seconds per suite (the roofline run's in
:mod:`apple_roofline.roofline.run.budget`, the graphics study's in :mod:`apple_roofline.graphics.grid`)
and reads a user's ``--budget`` through :func:`parse_budgets`; :mod:`.timing` records the seconds each
suite took against it.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Union

from ..errors import OptionError

__all__ = ["MAX_BUDGET_S", "Budgets", "parse_budgets", "defaults_text"]

#: The largest budget accepted, seconds.
MAX_BUDGET_S = 3600.0

#: What a caller may pass as budgets: None (the defaults), text (``"none"``, ``"gemm=120,sweep=30"``)
#: or a mapping of suite to seconds.
Budgets = Union[None, str, Mapping[str, float]]


def parse_budgets(suites: Sequence[str], defaults: Mapping[str, float], budgets: Budgets = None) -> Dict[str, float]:
    """Seconds of budget for each of ``suites`` (0 for none): ``defaults`` (a suite missing there has
    none), with ``budgets`` applied: ``"none"`` (no budget for any suite), ``"gemm=120,sweep=30"`` or a
    mapping of suite to seconds; a suite named there but not in ``suites`` is an error, so is a value
    of 0 or less or above :data:`MAX_BUDGET_S`.

    Raises:
        OptionError: (option ``budget``) malformed text, an unknown suite, or a value out of range.
    """
    out = {s: float(defaults.get(s, 0.0)) for s in suites}
    if budgets is None:
        return out
    valid = (
        f"none, or SUITE=SECONDS[,SUITE=SECONDS...] with SECONDS in (0, {MAX_BUDGET_S:g}] and SUITE one of "
        f"this run's suites (default seconds): {defaults_text(defaults, suites)}"
    )
    if isinstance(budgets, str):
        if budgets.strip().lower() == "none":
            return {s: 0.0 for s in suites}
        pairs: Dict[str, object] = {}
        for item in filter(None, (part.strip() for part in budgets.split(","))):
            key, sep, text = item.partition("=")
            if not sep:
                raise OptionError("budget", item, valid, problem="is not SUITE=SECONDS", shown=repr(item))
            pairs[key.strip().lower()] = text.strip()
        if not pairs:
            raise OptionError("budget", budgets, valid, problem="names no suite")
        budgets_map: Mapping[str, object] = pairs
    else:
        budgets_map = budgets
    for name, value in budgets_map.items():
        if name not in out:
            raise OptionError("budget", name, valid, problem="is not a suite of this run", shown=repr(name))
        seconds = _seconds(value)
        if seconds is None or not 0 < seconds <= MAX_BUDGET_S:
            raise OptionError(
                "budget",
                f"{name}={value}",
                valid,
                shown=repr(f"{name}={value}"),
                problem="is not a number of seconds" if seconds is None else "is out of range",
            )
        out[name] = seconds
    return out


def defaults_text(defaults: Mapping[str, float], suites: Optional[Sequence[str]] = None) -> str:
    """``"stream 30, sweep 60, …"``: each of ``suites`` (default: every suite of ``defaults``) with
    its default budget in seconds, "none" for a suite ``defaults`` lacks."""
    names = list(defaults) if suites is None else list(suites)
    return ", ".join(f"{s} {defaults[s]:.3g}" if defaults.get(s, 0.0) > 0 else f"{s} none" for s in names)


def _seconds(value: object) -> Optional[float]:
    try:
        seconds = float(value)  # type: ignore[arg-type]  # a number or its text
    except (TypeError, ValueError):
        return None
    return seconds if seconds == seconds else None  # NaN is not a number of seconds
