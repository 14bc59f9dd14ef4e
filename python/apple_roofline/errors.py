"""Typed errors for bad options and for what cannot be measured here, raised by the library and
turned into one-line messages and exit codes by the CLI (docs/design/files.md, "Exit codes").

The library checks every limit (samples per measurement, array sizes, launch counts ...) once,
where the limit lives, and raises :class:`OptionError` naming the *parameter* (``reps``,
``array_bytes``), the value and the valid range. The command line maps the parameter to its flag
(``--reps``, ``--array-bytes``) and prints ``error: --reps 0 is out of range (valid: 1 to 10000)``;
a Python caller sees ``reps 0 is out of range (valid: 1 to 10000)``. A study that would measure
nothing on this machine raises :class:`CannotMeasure` instead of returning an empty study. Nothing
here depends on any other module of the package.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

__all__ = [
    "OptionError",
    "CannotMeasure",
    "DeviceStopped",
    "nothing_measured",
    "reasons_text",
    "check_int",
    "check_ints",
]


class OptionError(ValueError):
    """A parameter value outside what the library accepts.

    Attributes:
        option: the parameter's name in the Python API (``"reps"``, ``"array_bytes"``).
        value: the value given.
        valid: the valid values, in words (``"1 to 10000"``).
        problem: what is wrong (``"is out of range"``, ``"is not an integer"``).
        shown: how the value is written in the message (default ``repr`` of ``value``; e.g.
            ``"1 GiB"`` for a byte count).
        reason: an optional clause saying why (where the range comes from, why a device is
            unavailable), written after the problem.
    """

    def __init__(
        self,
        option: str,
        value: object,
        valid: str,
        *,
        problem: str = "is out of range",
        shown: Optional[str] = None,
        reason: str = "",
    ) -> None:
        self.option = option
        self.value = value
        self.valid = valid
        self.problem = problem
        self.shown = shown if shown is not None else repr(value)
        self.reason = reason
        super().__init__(self.describe(option))

    def describe(self, name: str) -> str:
        """The message with ``name`` (a parameter or a command-line flag) as the subject:
        ``"<name> <value> <problem>[: <reason>] (valid: <valid>)"``."""
        why = f": {self.reason}" if self.reason else ""
        return f"{name} {self.shown} {self.problem}{why} (valid: {self.valid})"


class CannotMeasure(Exception):
    """The machine cannot measure what was asked: the study would hold no measurement, and the cause
    is this machine, not the arguments (Core ML off macOS, a library missing from this build, a
    device that runs none of the points asked for). The message is one line saying why; the command
    line exits 1 and writes no study file. Arguments that cannot be measured anywhere as given (a
    path of another backend than the device's) are an :class:`OptionError` instead."""


class DeviceStopped(RuntimeError):
    """A device wait outlasted its bound: the device stopped responding while running a pass
    (docs/design/watchdog.md, "A watchdog on every device wait"). Raised by the native backends' waits (CUDA
    streams, Metal command buffers) and by the wgpu read-backs; the pass's work may still be on the
    device. The command line ends the study with this message, writes the partial study and exits 1.

    Deliberately not a ``_core.BackendError``: code that skips a failed case and goes on must not
    catch it and keep measuring on a device that no longer answers.

    Attributes:
        pass_name: the pass (or the wait) that did not finish, e.g. ``"stream triad"``.
        bound_s: the seconds it was given.
        hint: what is known of why, where something is ("" where nothing is).
    """

    def __init__(self, pass_name: str, bound_s: float, hint: str = "") -> None:
        self.pass_name = pass_name
        self.bound_s = float(bound_s)
        self.hint = hint
        super().__init__(
            f"the device stopped responding: {pass_name} did not finish within {self.bound_s:.3g} s "
            "(still running on the device)" + (f"; {hint}" if hint else "")
        )

    def __reduce__(self) -> Tuple[type, Tuple[str, float, str]]:
        return (type(self), (self.pass_name, self.bound_s, self.hint))


def reasons_text(reasons: Sequence[str]) -> str:
    """Why points were skipped, in one clause: each distinct reason once, the first three joined by
    ``"; "``, then how many more ("" when there is none)."""
    distinct = list(dict.fromkeys(r for r in reasons if r))
    return "; ".join(distinct[:3]) + (f" (and {len(distinct) - 3} more)" if len(distinct) > 3 else "")


def nothing_measured(what: str, reasons: Sequence[str]) -> CannotMeasure:
    """The :class:`CannotMeasure` of a study that measured nothing: ``"nothing measured: <what>:
    <reasons>"`` (:func:`reasons_text`)."""
    shown = reasons_text(reasons)
    return CannotMeasure(f"nothing measured: {what}" + (f": {shown}" if shown else ""))


def check_int(value: object, option: str, lo: int, hi: Optional[int] = None) -> int:
    """``value`` as an ``int`` in ``lo..hi`` (no upper bound when ``hi`` is None).

    Raises:
        OptionError: ``value`` is not an integer (a bool is not), or is outside the range.
    """
    valid = f"{lo} to {hi}" if hi is not None else f"{lo} or more"
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise OptionError(option, value, valid, problem="is not an integer")
    number = int(value)
    if number < lo or (hi is not None and number > hi):
        raise OptionError(option, value, valid)
    return number


def check_ints(values: Sequence[object], option: str, lo: int, hi: Optional[int] = None) -> Tuple[int, ...]:
    """``values`` as ints, each in ``lo..hi`` (:func:`check_int`), sorted, duplicates dropped.

    Raises:
        OptionError: ``values`` is empty, or a value is not an integer in range.
    """
    if not values:
        raise OptionError(
            option,
            "",
            f"integers {lo} to {hi}" if hi is not None else f"integers {lo} or more",
            problem="names no value",
        )
    return tuple(sorted({check_int(v, option, lo, hi) for v in values}))
