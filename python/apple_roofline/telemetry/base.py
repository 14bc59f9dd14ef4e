"""The sampler interface (docs/design/power.md, "Clocks and power"): a background thread that reads a
source of clocks and power every ``period_s`` seconds into a bounded list of :class:`Sample`.

A subclass implements :meth:`Sampler.open` (prepare the source, or say why it cannot read),
:meth:`Sampler.read` (one reading: value name -> number) and, where it reports flags as a bitmask,
:meth:`Sampler.flag_names`. A source that delivers readings on its own schedule (a subprocess
such as ``powermetrics``) sets :attr:`Sampler.pushes` and calls :meth:`Sampler.add` instead.

A sampler that cannot read never fails the run: :meth:`Sampler.start` records a one-line
:attr:`Sampler.reason` and the sampler yields nothing.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from .window import POWER_VALUES, Sample, Summary, summarize

__all__ = ["Sample", "Sampler", "NullSampler", "clock", "one_line", "flags_of", "DEFAULT_PERIOD_S", "MAX_SAMPLES"]

#: Seconds between two readings of the background thread.
DEFAULT_PERIOD_S = 0.02
#: The most samples kept; older ones are dropped (about 33 minutes at the default period).
MAX_SAMPLES = 100_000


def clock() -> float:
    """The host clock samples and measurement windows share: ``time.perf_counter()``, seconds."""
    return time.perf_counter()


class Sampler:
    """Reads one source in a background thread; the base class reads nothing (override
    :meth:`open` and :meth:`read`). Use as ``start()`` ... ``window(t0, t1)`` ... ``stop()``, or as
    a context manager."""

    #: The sampler's name recorded in the run ("nvml", "rapl", "none").
    name = "none"
    #: How far back one power reading reaches, in seconds (0: the reading covers exactly the interval
    #: since the previous one, as an energy counter's delta does). A window shorter than this gets no
    #: power: the reading would describe the preceding work, not the measurement's.
    power_average_s = 0.0
    #: Whether the source delivers readings itself (through :meth:`add`) instead of being polled.
    pushes = False

    def __init__(self, *, period_s: float = DEFAULT_PERIOD_S, max_samples: int = MAX_SAMPLES) -> None:
        self.period_s = float(period_s)
        #: Why the sampler records nothing ("" while it reads); one line.
        self.reason = ""
        #: Values the source cannot read while it reads others, one line each (e.g. power).
        self.notes: List[str] = []
        #: Which reading gives the power, where the source has more than one (e.g. NVML's
        #: instantaneous field or its 1-s average); "" when there is one way.
        self.power_source = ""
        self._samples: Deque[Sample] = deque(maxlen=max_samples)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._open = False

    # -- what a source implements ------------------------------------------

    def open(self) -> str:
        """Prepare the source; "" when it can read, else the one-line reason it cannot."""
        return "no sampler for this device"

    def read(self) -> Mapping[str, float]:
        """One reading, value name -> number. Raises any exception when the source fails (the
        sampler then records the reason and stops reading)."""
        raise NotImplementedError

    def read_stamped(self) -> Tuple[float, Mapping[str, float]]:
        """``(t, values)``: one reading (:meth:`read`) and the time on :func:`clock` it describes;
        by default the time it returned. A source whose reading takes long overrides it."""
        values = self.read()
        return clock(), values

    def flag_names(self, key: str, bits: int) -> List[str]:
        """The names of the flags set in ``bits`` of the bitmask value ``key`` (e.g. ``"throttle_bits"``);
        none by default."""
        return []

    def close(self) -> None:
        """Release the source (called once by :meth:`stop` after a successful :meth:`open`)."""

    # -- the sampling ------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether the sampler is reading (started, opened and not failed)."""
        return self._open and not self.reason

    def start(self) -> "Sampler":
        """Open the source and start the background thread; on failure record :attr:`reason`
        (never raises for a source's failure). Returns self."""
        try:
            reason = self.open()
        except Exception as exc:  # a source's own failure is a reason, never the run's failure
            reason = f"cannot open {self.name}: {one_line(exc)}"
        if reason:
            self.reason = reason
            return self
        self._open = True
        if self.pushes:
            return self
        self.poll()
        if self.active:
            self._thread = threading.Thread(target=self._loop, name=f"telemetry-{self.name}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close the source; idempotent, never raises."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._open:
            self._open = False
            try:
                self.close()
            except Exception:  # closing is best effort
                pass

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def poll(self) -> None:
        """Take one reading now (thread-safe); a failure records :attr:`reason` and stops reading."""
        with self._lock:
            if not self.active:
                return
            try:
                t, values = self.read_stamped()
            except Exception as exc:
                self.reason = f"{self.name} stopped reading: {one_line(exc)}"
                self._stopping.set()
                return
            self._samples.append(Sample(t, dict(values)))

    def add(self, values: Mapping[str, float], t: Optional[float] = None) -> None:
        """Record one reading delivered by a pushing source, taken at ``t`` (default now, on
        :func:`clock`); ignored once the sampler stopped or failed."""
        with self._lock:
            if self.active:
                self._samples.append(Sample(clock() if t is None else t, dict(values)))

    def fail(self, reason: str) -> None:
        """Record why a pushing source stopped reading (one line) and stop reading."""
        with self._lock:
            self.reason = reason
            self._stopping.set()

    def _loop(self) -> None:
        while not self._stopping.wait(self.period_s):
            self.poll()

    def samples(self) -> Tuple[Sample, ...]:
        """Every sample kept so far, oldest first."""
        with self._lock:
            return tuple(self._samples)

    def window(self, t0: float, t1: float) -> Summary:
        """The summary (:func:`.window.summarize`) of the readings over ``[t0, t1]`` (seconds on
        :func:`clock`), after one reading taken now so that a window shorter than the period has one
        (a pushing source is not polled); empty when the sampler does not read. Power is left out
        of a window shorter than :attr:`power_average_s`, and power readings taken less than that
        after ``t0`` are left out of the mean (they average over time before the window)."""
        if not self.active:
            return {}
        if not self.pushes:
            self.poll()
        summary = summarize(
            self.samples(), t0, t1, self.flag_names, power_after=self.power_average_s, period_s=self.period_s
        )
        if t1 - t0 < self.power_average_s:
            for key in POWER_VALUES + ("power_max_w",):
                summary.pop(key, None)
        return summary

    @property
    def power_window_s(self) -> float:
        """The timed window that gets power readings wholly inside it: twice the longer of
        :attr:`power_average_s` and the sampling period, seconds (``run --power-window``)."""
        return 2.0 * max(self.power_average_s, self.period_s)

    def describe(self) -> Dict[str, object]:
        """What the run records: ``{"sampler", "period_s", "samples"}``, ``"power_average_s"`` where a
        power reading averages over a longer time than the sampling period, ``"power_source"`` (which
        reading gave the power, where a source has several), ``"reason"`` when it read nothing (or
        stopped) and ``"notes"`` naming values it could not read."""
        out: Dict[str, object] = {"sampler": self.name, "period_s": self.period_s, "samples": len(self.samples())}
        if self.power_average_s:
            out["power_average_s"] = self.power_average_s
        if self.power_source:
            out["power_source"] = self.power_source
        if self.reason:
            out["reason"] = self.reason
        if self.notes:
            out["notes"] = list(self.notes)
        return out


class NullSampler(Sampler):
    """A sampler for a device no source covers: it reads nothing and says why."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self._why = reason

    def open(self) -> str:
        """Always the reason given."""
        return self._why


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message (or its type's name), whitespace collapsed."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def flags_of(bits: int, names: Sequence[Tuple[int, str]]) -> List[str]:
    """The names of ``names`` (bit, name) set in ``bits``, then ``"0x..."`` for bits no name covers."""
    out = [n for b, n in names if bits & b]
    rest = bits & ~sum(b for b, _ in names)
    if rest:
        out.append(hex(rest))
    return out
