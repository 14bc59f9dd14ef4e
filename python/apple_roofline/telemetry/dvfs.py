"""Apple silicon's DVFS tables and performance-state residencies (docs/design.md, "Clocks and power").

IOReport's performance-state channels give the time spent in each state by name (``OFF``, ``IDLE``,
``DOWN``, then one state per DVFS step), never a frequency; the frequencies are the IORegistry
``pmgr`` entry's ``voltage-states<N>`` and ``voltage-states<N>-sram`` properties (pairs of
little-endian uint32: frequency, voltage). Which key belongs to which block is not documented and
changes between chips (macmon reads the GPU's from ``voltage-states9`` and the CPU clusters' from
``voltage-states1-sram`` / ``voltage-states5-sram``; the M5 renumbered them), so a table is accepted
only when its shape fits the block it is read for (:func:`gpu_table_problem`,
:func:`cpu_table_problem`), and where the preferred key does not fit, the table that does is looked
for among all keys (:func:`choose_table`); the choice, or the reason none fits, is said in a note.

A block's clock over an interval is the residency-weighted mean of its active states' frequencies
(:func:`residency_clock`); where the block lists more (or fewer) active states than the table has
steps, the first N are paired, as macmon did, and the mismatch is noted.
"""

from __future__ import annotations

import struct
from typing import List, Mapping, Optional, Sequence, Tuple

__all__ = ["INACTIVE", "GPU_KEYS", "CPU_KEYS", "GPU_RANGE_MHZ", "CPU_RANGE_MHZ", "parse_dvfs", "active_states",
           "gpu_table_problem", "cpu_table_problem", "choose_table", "residency_clock", "ResidencyClock",
           "cpu_cluster_kind"]

#: Performance states in which the block does not run.
INACTIVE = ("OFF", "IDLE", "DOWN")
#: The GPU table's key as macmon reads it; tried first.
GPU_KEYS = ("voltage-states9", "voltage-states9-sram")
#: The CPU clusters' tables as macmon reads them ("E": efficiency, "P": performance), tried first.
CPU_KEYS = {"E": ("voltage-states1-sram", "voltage-states1"), "P": ("voltage-states5-sram", "voltage-states5")}
#: Plausible GPU steps (MHz): every Apple GPU's DVFS steps lie inside.
GPU_RANGE_MHZ = (100.0, 3000.0)
#: Plausible CPU steps (MHz).
CPU_RANGE_MHZ = (100.0, 6000.0)


def parse_dvfs(data: bytes, *, hz: Optional[bool] = True) -> List[float]:
    """A ``voltage-states`` property (pairs of little-endian uint32: frequency, voltage) as MHz.
    ``hz`` True: the frequencies are in Hz (the GPU's on every chip); False: kHz; None: decided by
    magnitude, as the CPU tables are Hz up to the M3 and kHz from the M4 on (macmon's
    ``sources.rs``): kHz when the largest entry is below 10,000,000 (10 GHz in kHz, 10 MHz in Hz)."""
    raw = [struct.unpack_from("<I", data, 8 * i)[0] for i in range(len(data) // 8)]
    if hz is None:
        hz = bool(raw) and max(raw) >= 10_000_000
    return [v / (1e6 if hz else 1e3) for v in raw]


def active_states(states: Sequence[Tuple[str, int]]) -> List[Tuple[str, int]]:
    """The states of a performance-state channel in which the block runs (not :data:`INACTIVE`)."""
    return [(n, r) for n, r in states if n.strip().upper() not in INACTIVE]


def _rising_within(steps: Sequence[float], lo: float, hi: float) -> str:
    if not steps:
        return "has no steps"
    if any(not lo <= f <= hi for f in steps):
        return f"has steps outside {lo:g}-{hi:g} MHz ({min(steps):g}-{max(steps):g})"
    if any(b <= a for a, b in zip(steps, steps[1:])):
        return "does not rise"
    return ""


def gpu_table_problem(freqs_mhz: Sequence[float], n_active: int) -> str:
    """Why ``freqs_mhz`` is not the GPU's table for a GPU with ``n_active`` active states ("" when it
    is): entry 0 (the off state) must be 0 and the rest rise within :data:`GPU_RANGE_MHZ`, one per
    active state (``n_active`` < 0: the count is not known yet and not checked)."""
    if not freqs_mhz:
        return "is empty"
    if freqs_mhz[0] != 0:
        return f"starts at {freqs_mhz[0]:g} MHz, not 0 (the off state)"
    why = _rising_within(freqs_mhz[1:], *GPU_RANGE_MHZ)
    if why:
        return why
    if n_active >= 0 and len(freqs_mhz) - 1 != n_active:
        return f"has {len(freqs_mhz) - 1} steps for {n_active} active states"
    return ""


def cpu_table_problem(freqs_mhz: Sequence[float], n_active: int) -> str:
    """Why ``freqs_mhz`` is not a CPU cluster's table for ``n_active`` active states ("" when it is):
    its entries must rise within :data:`CPU_RANGE_MHZ`, one per active state (``n_active`` < 0: not
    checked)."""
    why = _rising_within(freqs_mhz, *CPU_RANGE_MHZ)
    if why:
        return why
    if n_active >= 0 and len(freqs_mhz) != n_active:
        return f"has {len(freqs_mhz)} steps for {n_active} active states"
    return ""


def choose_table(tables: Mapping[str, Sequence[float]], preferred: Sequence[str], n_active: int, *,
                 gpu: bool) -> Tuple[str, List[float], str]:
    """``(key, MHz, note)``: the table of ``tables`` (pmgr key -> MHz) for a block with ``n_active``
    active states. The first of ``preferred`` that fits (:func:`gpu_table_problem` or
    :func:`cpu_table_problem`), else the first other key (sorted) that fits, with a note saying so;
    where none fits in length, the first well-formed one (preferred first) whose step count is
    nearest, with a note (its first N steps are paired, :func:`residency_clock`); where none is
    well-formed, ``("", [], reason)``."""
    problem = gpu_table_problem if gpu else cpu_table_problem
    order = [k for k in preferred if k in tables] + sorted(k for k in tables if k not in preferred)
    for key in order:
        if not problem(tables[key], n_active):
            present = [k for k in preferred if k in tables]
            note = "" if key in preferred else f"{key} used: " + (
                "; ".join(f"the expected {k} {problem(tables[k], n_active)}" for k in present) if present else
                f"no expected key ({'/'.join(preferred) or 'none known'}) present")
            return key, list(tables[key]), note
    formed = [k for k in order if not problem(tables[k], -1)]
    if formed:
        off = 1 if gpu else 0  # the GPU's entry 0 is the off state, no step
        key = min(formed, key=lambda k: abs(len(tables[k]) - off - n_active))
        return key, list(tables[key]), (f"no pmgr table has one step per active state ({n_active}); "
                                        f"{key} {problem(tables[key], n_active)}: the first steps are paired")
    why = "; ".join(f"{k} {problem(tables[k], -1)}" for k in order[:4]) or "no voltage-states key"
    return "", [], f"no pmgr table fits ({why})"


class ResidencyClock:
    """One performance-state channel's interval: ``mhz`` (the residency-weighted mean frequency of
    the active states, None when never active or no table), ``busy`` (the active share, 0..1, None
    when no time passed) and ``note`` (the state/step count mismatch, "" when they match)."""

    __slots__ = ("mhz", "busy", "note")

    def __init__(self, mhz: Optional[float], busy: Optional[float], note: str = "") -> None:
        self.mhz, self.busy, self.note = mhz, busy, note


def residency_clock(states: Sequence[Tuple[str, int]], steps_mhz: Sequence[float]) -> ResidencyClock:
    """The clock of one channel's residencies ``states`` ((name, residency) each, any time unit)
    over the DVFS steps ``steps_mhz`` (one per active state, lowest first; for the GPU the table
    without its off entry). Where the counts differ the first ``min`` states and steps are paired
    and the note says so; residency in unpaired states is left out of the clock, not of ``busy``."""
    total = sum(max(r, 0) for _n, r in states)
    active = active_states(states)
    busy_time = sum(max(r, 0) for _n, r in active)
    busy = busy_time / total if total > 0 else None
    note = "" if len(active) == len(steps_mhz) or not steps_mhz else (
        f"{len(active)} active states for {len(steps_mhz)} DVFS steps: the first {min(len(active), len(steps_mhz))} paired")
    paired = list(zip(steps_mhz, active))
    weight = sum(max(r, 0) for _f, (_n, r) in paired)
    mhz = sum(f * max(r, 0) for f, (_n, r) in paired) / weight if weight > 0 else None
    return ResidencyClock(mhz, busy, note)


def cpu_cluster_kind(channel: str) -> str:
    """"E" or "P" for a ``CPU Complex Performance States`` channel (``ECPU``, ``PCPU1``,
    ``DIE_1_PCPU``, the M5's ``MCPU0``/``MCPU1``), "" for one that names no cluster. Only picks the
    preferred table keys; the table is validated either way."""
    name = channel.upper()
    if name.startswith("DIE_"):
        name = name.split("_", 2)[-1]
    if "ECPU" in name:
        return "E"
    if "PCPU" in name or "MCPU" in name:
        return "P"
    return ""
