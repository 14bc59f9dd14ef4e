"""A roofline run's options, in one object: :class:`RunOptions`, built once from ``run``'s flags or
by a Python caller of :func:`~.runner.run_roofline`, validated when it is built, and recorded once — the
same values in the run's journal header and its results header (docs/design/files.md, "Journal and resume").

Also the checks of the options that have limits (suites, STREAM array size, sustain seconds): the
library's, whose :class:`~apple_roofline.errors.OptionError` names the parameter and its valid range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Protocol, Sequence, Tuple, Union

from ...devices import DeviceSpec
from ...errors import OptionError
from ...sizes import format_size
from ...study.progress import Progress
from ...suites import SuiteContext, registry
from ...timing.measure import DEFAULT_REPS, check_reps
from .budget import Budgets, suite_budgets

__all__ = [
    "RunOptions",
    "Tuner",
    "OPTION_FLAGS",
    "MIN_ARRAY_BYTES",
    "MAX_SUSTAIN_S",
    "parse_suites",
    "default_array_bytes",
    "dram_array_bytes",
    "array_bytes_range",
    "check_array_bytes",
    "check_sustain",
]

MIB = 1 << 20
#: The smallest STREAM array accepted, bytes.
MIN_ARRAY_BYTES = 4096

#: The longest ``sustain_s`` (``run --sustain``): a minute of timed samples per measurement.
MAX_SUSTAIN_S = 60.0

#: The options of a run's journal that a command-line flag sets, in the order a resumed run checks
#: them: ``budgets_s`` follows from ``suites`` and ``quick``, so a difference there names them first.
OPTION_FLAGS: Mapping[str, str] = {
    "suites": "--suite",
    "quick": "--quick",
    "reps": "--reps",
    "array_bytes": "--array-bytes",
    "sustain_s": "--sustain",
    "power_window": "--power-window",
    "budgets_s": "--budget",
}


class Tuner(Protocol):
    """Chooses the block size of each kernel of a suite before the suite is measured (``run --tune``:
    :class:`apple_roofline.tuning.runner.QuickTuner`, :class:`~apple_roofline.tuning.runner.FileTuner`)."""

    def describe(self) -> str:
        """One line: how the sizes were chosen (recorded as the run's ``device.tune``)."""

    def blocks(self, ctx: SuiteContext, suite: str, progress: Optional[Progress] = None) -> Mapping[str, int]:
        """``"suite/kernel/dtype"`` to threads per block for the kernels of ``suite`` it has a size for."""


@dataclass(frozen=True)
class RunOptions:
    """What a roofline run measures and how, checked when built (``__post_init__``: the one place a
    run's options are validated).

    Attributes:
        device: "cpu", "cuda:0", "metal:0" or a DeviceSpec; None: the best available
            (:func:`~apple_roofline.devices.resolve_device`, when the runner opens it).
        suites: the suites named, in the registry's order, duplicates dropped (a comma-separated
            text or a sequence when built); None: the default run
            (:func:`~apple_roofline.suites.registry.default_suites`, in the forms each takes unnamed,
            e.g. matrix's largest tiles and hierarchy's few points per level).
        quick: a fast look: the sweep trimmed, shorter launch budgets, warm-up and time budgets (the
            runner sizes those from a prediction of their time where no ``budget`` is given;
            :attr:`budgets_s` holds the defaults it starts from).
        reps: timed samples per measurement, 1 to :data:`~apple_roofline.timing.measure.MAX_REPS`.
        array_bytes: bytes per STREAM array; None: :func:`default_array_bytes` of the device. Its
            range depends on the device's memory, so :meth:`array_bytes_for` checks it.
        telemetry: sample clocks and power in the background.
        power_window: lengthen every measurement's timed samples to the sampler's power window.
        sustain_s: seconds every measurement's timed samples last at least, 0 to :data:`MAX_SUSTAIN_S`
            (0: off).
        budget: the seconds each suite may take as given (:func:`~.budget.suite_budgets`: ``"none"``,
            ``"gemm=120"`` or a mapping); :attr:`budgets_s` is what it gives.
        tuner: chooses each kernel's block size before its suite (None: the tables' sizes).
        command: the command line to record.
        budgets_s: (derived) seconds per suite of :attr:`suite_names` (0: none); none when
            ``sustain_s`` or ``power_window`` lengthen every measurement and no ``budget`` is given.

    Raises:
        OptionError: (a ValueError) an unknown suite, ``reps`` outside 1 to 10000, ``sustain_s``
            outside 0 to :data:`MAX_SUSTAIN_S`, a malformed ``budget`` or one outside (0, 3600]
            seconds; the message names the parameter and its valid range.
    """

    device: Union[str, DeviceSpec, None] = None
    suites: Optional[Sequence[str]] = None
    quick: bool = False
    reps: int = DEFAULT_REPS
    array_bytes: Optional[int] = None
    telemetry: bool = True
    power_window: bool = False
    sustain_s: float = 0.0
    budget: Budgets = None
    tuner: Optional[Tuner] = None
    command: Sequence[str] = ()
    budgets_s: Mapping[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # frozen: normalised once, here

        if self.suites is not None:
            put("suites", parse_suites(self.suites))
        put("reps", check_reps(self.reps))
        put("sustain_s", check_sustain(self.sustain_s))
        put("command", tuple(self.command))
        lengthened = self.budget is None and (self.sustain_s or self.power_window)
        put("budgets_s", suite_budgets(self.suite_names, self.quick, "none" if lengthened else self.budget))

    @property
    def suite_names(self) -> Tuple[str, ...]:
        """The suites the run measures: :attr:`suites`, or the registry's default suites."""
        return registry.default_suites() if self.suites is None else tuple(self.suites)

    @property
    def max_warmup_s(self) -> float:
        """Seconds of warm-up per measurement at most (shorter with :attr:`quick`)."""
        return 0.05 if self.quick else 0.5

    def array_bytes_for(self, info: Mapping[str, Any]) -> int:
        """Bytes per STREAM array on the device ``info`` describes: :attr:`array_bytes`, or
        :func:`default_array_bytes`, checked against :func:`array_bytes_range`.

        Raises:
            OptionError: (option ``array_bytes``) out of range for this device.
        """
        return check_array_bytes(default_array_bytes(info) if self.array_bytes is None else self.array_bytes, info)

    def recorded(self, array_bytes: int) -> Dict[str, Any]:
        """The options as the journal's header records them (and a resumed run compares, in
        :data:`OPTION_FLAGS` order), with the device's ``array_bytes``."""
        return {
            "suites": list(self.suite_names),
            "quick": self.quick,
            "reps": self.reps,
            "array_bytes": array_bytes,
            "sustain_s": self.sustain_s,
            "power_window": self.power_window,
            "budgets_s": dict(self.budgets_s),
            "tune": self.tuner.describe() if self.tuner is not None else None,
            "telemetry": self.telemetry,
        }

    def header(self, array_bytes: int) -> Dict[str, Any]:
        """The options the results' ``device`` header records, taken from :meth:`recorded`:
        ``array_bytes``, ``quick`` and ``reps``; ``sustain_s`` and ``tune`` where set."""
        rec = self.recorded(array_bytes)
        return {
            **{k: rec[k] for k in ("array_bytes", "quick", "reps")},
            **{k: rec[k] for k in ("sustain_s", "tune") if rec[k]},
        }


def parse_suites(
    text: Union[str, Sequence[str]], choices: Optional[Sequence[str]] = None, unknown: str = "is not a suite"
) -> Tuple[str, ...]:
    """Parse ``"stream,peak"`` (or ``["stream", "peak"]``) into ``("stream", "peak")``: the order of
    ``choices`` (default: every suite, :func:`~apple_roofline.suites.registry.suite_names`),
    duplicates dropped. ``unknown`` is the problem a name outside ``choices`` is reported with.

    Raises:
        OptionError: (option ``suites``) an unknown suite, or an empty list; the message names the
            valid suites.
    """
    choices = registry.suite_names() if choices is None else choices
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [s.strip().lower() for s in items if s.strip()]
    valid = ", ".join(choices)
    if not names:
        raise OptionError("suites", text, valid, problem="names no suite")
    for n in names:
        if n not in choices:
            raise OptionError("suites", n, valid, problem=unknown, shown=repr(n))
    return tuple(s for s in choices if s in names)


def default_array_bytes(info: Mapping[str, Any]) -> int:
    """Default bytes per STREAM array: 256 MiB (the M5 article's size), or 4× the last-level cache
    if that is larger — on Apple silicon the system-level cache (up to 96 MB) is not reported, so
    the floor also covers it — capped so three arrays take at most half the memory."""
    want = max(256 * MIB, 4 * int(info.get("llc_bytes", 0) or 0))
    mem = int(info.get("memory_bytes", 0) or 0)
    if mem:
        want = min(want, mem // 6 // MIB * MIB)
    most = int(info.get("max_buffer_bytes", 0) or 0)  # a WebGPU adapter's largest binding
    if most:
        want = min(want, most // MIB * MIB)
    return max(MIB, want)


def dram_array_bytes(info: Mapping[str, Any]) -> int:
    """The smallest STREAM array that still measures DRAM rather than a cache (docs/design/measurement.md,
    "Measurement"): 4× the last-level cache, rounded up to a MiB, at most :func:`default_array_bytes`;
    that default itself when the cache size is unknown (Apple's system-level cache is not reported,
    so only the 256 MiB floor is known to exceed it). ``tune --quick`` uses it."""
    llc = int(info.get("llc_bytes", 0) or 0)
    default = default_array_bytes(info)
    if not llc:
        return default
    return min(default, max(MIB, -(-4 * llc // MIB) * MIB))


def array_bytes_range(info: Mapping[str, Any]) -> Tuple[int, Optional[int]]:
    """The STREAM array sizes a device accepts, bytes: :data:`MIN_ARRAY_BYTES` to a third of half
    its memory (three arrays, plus validation's chunks and the interpreter, in half of memory), at
    most a WebGPU adapter's largest binding (``max_buffer_bytes``), or no upper bound when neither
    is known."""
    mem = int(info.get("memory_bytes", 0) or 0)
    hi = (mem // 2) // 3 if mem else None
    most = int(info.get("max_buffer_bytes", 0) or 0)  # a WebGPU adapter's largest binding
    if most:
        hi = min(hi, most) if hi is not None else most
    return MIN_ARRAY_BYTES, hi


def check_array_bytes(array_bytes: int, info: Mapping[str, Any]) -> int:
    """``array_bytes`` if it is within :func:`array_bytes_range` of the device ``info`` describes.

    Raises:
        OptionError: (option ``array_bytes``) out of range; the message gives the sizes and why.
    """
    lo, hi = array_bytes_range(info)
    if lo <= array_bytes and (hi is None or array_bytes <= hi):
        return array_bytes
    mem = int(info.get("memory_bytes", 0) or 0)
    valid = f"{format_size(lo)} to {format_size(hi)}" if hi is not None else f"{format_size(lo)} or more"
    most = int(info.get("max_buffer_bytes", 0) or 0)
    reason = (
        f"three arrays must fit in half of the {format_size(mem)} memory of {info.get('name', 'this device')}"
        if not most or (mem and (mem // 2) // 3 <= most)
        else f"an array is one binding, at most {format_size(most)} on {info.get('name', 'this adapter')}"
    )
    raise OptionError("array_bytes", array_bytes, valid, shown=format_size(array_bytes), reason=reason)


def check_sustain(sustain_s: object) -> float:
    """``sustain_s`` as seconds in 0 to :data:`MAX_SUSTAIN_S` (0: off).

    Raises:
        OptionError: (option ``sustain_s``) not a number, or out of range.
    """
    try:
        value = float(sustain_s)  # type: ignore[arg-type]  # any number, or its text
    except (TypeError, ValueError):
        raise OptionError(
            "sustain_s", sustain_s, f"0 to {MAX_SUSTAIN_S:g} seconds", problem="is not a number"
        ) from None
    if not 0.0 <= value <= MAX_SUSTAIN_S:
        raise OptionError("sustain_s", sustain_s, f"0 to {MAX_SUSTAIN_S:g} seconds")
    return value
