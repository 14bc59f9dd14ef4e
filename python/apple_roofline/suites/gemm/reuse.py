"""Inputs drawn once for every GEMM ladder that takes the same ones (docs/design/budgets.md, "Time budgets").

The fp32, tf32 and tiled ladders (and a unified-memory machine's CPU fp32 ladder) store the same
fp32 A and B at each N, drawn from the same seed: :class:`SharedDraws` draws them once and hands the
same arrays to each. It keeps a pair only while a ladder still to run takes that kind: the last
ladder of a kind takes its pairs out (each size is used once more), and when a ladder ends the
pairs no later ladder takes are released (an 8192² fp32 pair is 512 MiB).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Dict, Generic, Hashable, Iterable, Tuple, TypeVar

__all__ = ["SharedDraws"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedDraws(Generic[K, V]):
    """``draw(kind, n)``'s values, drawn once per ``(kind, n)`` for the ladders of ``plan``: the
    kind of each ladder the suite will run, in order. A ladder calls :meth:`start` before its first
    :meth:`get` and :meth:`end` after its last; :attr:`draws` counts the calls of ``draw``."""

    def __init__(self, draw: Callable[[K, int], V], plan: Iterable[K]) -> None:
        self.draw = draw
        #: ladders of each kind not yet started
        self.remaining: Counter[K] = Counter(plan)
        self.entries: Dict[Tuple[K, int], V] = {}
        self.draws = 0

    def start(self, kind: K) -> None:
        """A ladder of ``kind`` starts (one of the plan's, or one beyond it, which shares nothing)."""
        if self.remaining[kind] > 0:
            self.remaining[kind] -= 1

    def get(self, kind: K, n: int) -> V:
        """The values of ``(kind, n)``: kept ones, else drawn (and kept where a later ladder of
        ``kind`` is still to run). Without a later ladder they are handed out and forgotten."""
        key = (kind, n)
        later = self.remaining[kind] > 0
        value = self.entries.get(key) if later else self.entries.pop(key, None)
        if value is None:
            value = self.draw(kind, n)
            self.draws += 1
            if later:
                self.entries[key] = value
        return value

    def end(self, kind: K) -> None:
        """A ladder of ``kind`` ended: where no later one takes ``kind``, its values are released."""
        if self.remaining[kind] <= 0:
            for key in [key for key in self.entries if key[0] == kind]:
                del self.entries[key]

    def held(self) -> int:
        """How many ``(kind, n)`` values are kept now."""
        return len(self.entries)

    def clear(self) -> None:
        """Release every kept value (the suite's cases ended)."""
        self.entries.clear()
