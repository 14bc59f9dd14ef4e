"""Collecting theoretical ceilings with their derivations (shared by the spec models: the GPUs'
:mod:`.cuda` and :mod:`.apple`, and the CPUs' :mod:`.cpu`)."""

from __future__ import annotations

from typing import Dict, List

from ..study.records import Ceiling

__all__ = ["CeilingCollector"]


class CeilingCollector:
    """Theoretical ceilings of one device and their JSON description.

    ``ceilings``: the :class:`~apple_roofline.study.records.Ceiling` objects
    (``source="theoretical"``); ``peaks``: name -> ``{"gbps" or "gflops": value, "derivation":
    text}``; ``omitted``: name -> why a ceiling could not be made.
    """

    def __init__(self) -> None:
        self.ceilings: List[Ceiling] = []
        self.peaks: Dict[str, Dict[str, object]] = {}
        self.omitted: Dict[str, str] = {}

    def add(self, name: str, kind: str, value: float, derivation: str) -> None:
        """Add ceiling ``name`` of ``kind`` ("bandwidth" in GB/s, else GFLOP/s); a value the
        Ceiling rejects (not positive and finite) is recorded in ``omitted`` instead of raising.

        Raises:
            Nothing: the :class:`ValueError` of an unusable value becomes ``omitted[name]``.
        """
        unit = "GB/s" if kind == "bandwidth" else "GFLOP/s"
        try:
            self.ceilings.append(
                Ceiling(name=name, kind=kind, value=value, unit=unit, source="theoretical", from_=derivation)
            )
        except ValueError as e:
            self.omitted[name] = str(e)
            return
        self.peaks[name] = {("gbps" if kind == "bandwidth" else "gflops"): value, "derivation": derivation}
