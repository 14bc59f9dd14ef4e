"""Apple silicon's DVFS tables and performance-state residencies (docs/design/power.md, "Clocks and power").

IOReport's performance-state channels give the time spent in each state by name (``OFF``, ``IDLE``,
``DOWN``, then one state per DVFS step), never a frequency; the frequencies are the IORegistry
``pmgr`` entry's ``voltage-states<N>`` and ``voltage-states<N>-sram`` properties (pairs of
little-endian uint32: frequency, voltage). Which key belongs to which block is not documented and
changes between chips: macmon (``src_lib/sources.rs``) reads the GPU's from ``voltage-states9``
and the CPU clusters' from ``voltage-states1-sram`` / ``voltage-states5-sram``, and, where those
are missing (the M5 renumbered them), from the keys the ``acc-clusters`` property names
(:func:`acc_cluster_keys`). A table is accepted only when its shape fits the block it is read for
(:func:`gpu_table_problem`, :func:`cpu_table_problem`); the expected key is taken when well formed
(the GPU's whatever its length: on the M1 and M2 the ``GPUPH`` channel lists OFF and P1..P15 for a
table of 6 to 8 steps), and otherwise the table that fits is looked for among the other keys
(:func:`choose_table`); the choice, or the reason none fits, is said in a note.

A block's clock over an interval is the residency-weighted mean of its active states' frequencies
(:func:`residency_clock`), states and steps paired in order, lowest first, as macmon pairs them;
residency in states beyond the table (which have no frequency) is left out of the clock and noted.
"""

from __future__ import annotations

import struct
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "INACTIVE",
    "GPU_KEYS",
    "CPU_KEYS",
    "ACC_CLUSTERS",
    "GPU_RANGE_MHZ",
    "CPU_RANGE_MHZ",
    "parse_dvfs",
    "active_states",
    "gpu_table_problem",
    "cpu_table_problem",
    "choose_table",
    "residency_clock",
    "ResidencyClock",
    "cpu_cluster_kind",
    "acc_cluster_keys",
    "cpu_keys",
]

#: Performance states in which the block does not run.
INACTIVE = ("OFF", "IDLE", "DOWN")
#: The GPU table's key as macmon reads it; tried first.
GPU_KEYS = ("voltage-states9", "voltage-states9-sram")
#: The CPU clusters' tables as macmon reads them on the M1 to M4 ("E": efficiency, "P": performance),
#: tried first.
CPU_KEYS = {"E": ("voltage-states1-sram", "voltage-states1"), "P": ("voltage-states5-sram", "voltage-states5")}
#: The ``pmgr`` property listing the CPU clusters' tables (:func:`acc_cluster_keys`).
ACC_CLUSTERS = "acc-clusters"
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


def choose_table(
    tables: Mapping[str, Sequence[float]], preferred: Sequence[str], n_active: int, *, gpu: bool
) -> Tuple[str, List[float], str]:
    """``(key, MHz, note)``: the table of ``tables`` (pmgr key -> MHz) for a block with ``n_active``
    active states.

    The first of ``preferred`` that is well formed (:func:`gpu_table_problem` or
    :func:`cpu_table_problem` with the count unchecked) is used without a note: for the GPU whatever
    its length, as macmon does (the ``GPUPH`` channel lists more states than the table has steps on
    the M1 and M2, and its states pair with the steps in order, :func:`residency_clock`); for a CPU
    cluster only with one step per active state (each cluster channel lists one state per step).
    Otherwise lengths are compared among the other keys (sorted): the first with one step per
    active state, with a note saying why the expected key was passed over; else the well-formed
    table nearest in step count (preferred first; its first steps paired), with a note; where none
    is well formed, ``("", [], reason)``."""
    problem = gpu_table_problem if gpu else cpu_table_problem
    present = [k for k in preferred if k in tables]
    for key in present:
        if not problem(tables[key], -1 if gpu else n_active):
            return key, list(tables[key]), ""
    others = sorted(k for k in tables if k not in preferred)
    why_not = "; ".join(f"the expected {k} {problem(tables[k], -1 if gpu else n_active)}" for k in present) or (
        f"no expected key ({'/'.join(preferred) or 'none known'}) present"
    )
    for key in others:
        if not problem(tables[key], n_active):
            return key, list(tables[key]), f"{key} used: {why_not}"
    formed = [k for k in present + others if not problem(tables[k], -1)]  # a CPU's expected key may be here
    if formed:
        off = 1 if gpu else 0  # the GPU's entry 0 is the off state, no step
        key = min(formed, key=lambda k: abs(len(tables[k]) - off - n_active))
        return (
            key,
            list(tables[key]),
            (
                f"no pmgr table has one step per active state ({n_active}); "
                f"{key} {problem(tables[key], n_active)}: the first steps are paired"
            ),
        )
    why = "; ".join(f"{k} {problem(tables[k], -1)}" for k in present + others) or "no voltage-states key"
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
    over the DVFS steps ``steps_mhz`` (lowest first; for the GPU the table without its off entry).
    The active states pair with the steps in order, as macmon pairs them. Where the channel lists
    more active states than the table has steps (the M1's and M2's ``GPUPH``: P1..P15 for 6 to 8
    steps) the states beyond the table have no frequency: their residency is left out of the clock,
    not of ``busy``, and noted when there is any. Where it lists fewer, the pairing is a guess and
    is noted."""
    total = sum(max(r, 0) for _n, r in states)
    active = active_states(states)
    busy_time = sum(max(r, 0) for _n, r in active)
    busy = busy_time / total if total > 0 else None
    paired = list(zip(steps_mhz, active))
    weight = sum(max(r, 0) for _f, (_n, r) in paired)
    mhz = sum(f * max(r, 0) for f, (_n, r) in paired) / weight if weight > 0 else None
    note = ""
    if steps_mhz and len(active) < len(steps_mhz):
        note = f"{len(active)} active states for {len(steps_mhz)} DVFS steps: the first {len(active)} paired"
    elif steps_mhz and busy_time > weight:
        note = (
            f"{len(active)} active states for {len(steps_mhz)} DVFS steps: "
            f"{100 * (busy_time - weight) / busy_time:.1f} % of the active time was in states beyond the table "
            f"({active[len(steps_mhz)][0]} on), left out of the clock"
        )
    return ResidencyClock(mhz, busy, note)


def cpu_cluster_kind(channel: str) -> str:
    """ "E" or "P" for a ``CPU Complex Performance States`` channel, "" for one that names no
    cluster: "P" for the top tier (``PCPU``, ``PCPU1``, ``DIE_1_PCPU``; the M5's super cores), "E"
    for the tier below it (``ECPU``; the M5 Pro's and Max's ``MCPU0``/``MCPU1``, which take the
    efficiency cores' place, as macmon reads them and as ``acc-clusters`` orders them). Only picks
    the preferred table keys (:func:`cpu_keys`); the table is validated either way."""
    name = channel.upper()
    if name.startswith("DIE_"):
        name = name.split("_", 2)[-1]
    if "ECPU" in name or "MCPU" in name:
        return "E"
    if "PCPU" in name:
        return "P"
    return ""


def acc_cluster_keys(data: bytes) -> Dict[str, str]:
    """The CPU clusters' table keys that the ``pmgr`` property :data:`ACC_CLUSTERS` names: 8-byte
    entries, byte 0 the ``voltage-states<N>-sram`` number, byte 1 the cluster's tier (0 efficiency,
    higher faster), as macmon reads them (``parse_acc_clusters``, from an M5 Max's bytes): "P" the
    highest tier's key, "E" the next one's. Empty for fewer than two entries."""
    entries = sorted((data[i + 1], data[i]) for i in range(0, len(data) - len(data) % 8, 8))
    if len(entries) < 2:
        return {}
    return {"P": f"voltage-states{entries[-1][1]}-sram", "E": f"voltage-states{entries[-2][1]}-sram"}


def cpu_keys(kind: str, acc_clusters: bytes = b"") -> Tuple[str, ...]:
    """The preferred table keys of a cluster of ``kind`` ("E" or "P", :func:`cpu_cluster_kind`):
    the M1-M4 keys (:data:`CPU_KEYS`), then the one ``acc_clusters`` (the property's bytes, b"" when
    absent) names, as macmon falls back to it; () for "" ."""
    keys = CPU_KEYS.get(kind, ())
    extra = acc_cluster_keys(acc_clusters).get(kind, "")
    return keys + ((extra,) if extra and extra not in keys else ())
