"""Linux CPUs: package power from the RAPL energy counters under ``/sys/class/powercap`` and the
cores' clocks from cpufreq (docs/design/power.md, "Clocks and power").

Power is the change of each package zone's ``energy_uj`` (microjoules) between two readings over
the time between them, summed over packages; a counter that passed ``max_energy_range_uj`` wraps
to 0 and the range is added back. The clock is the mean of every readable
``/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq`` (kHz), in MHz. Since Linux 5.10 the
energy counters are readable by root only; then the sampler records the clock alone and says
why power is missing, and when neither reads it records why and reads nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple, Union

from .base import Sampler, clock, one_line

__all__ = ["RaplSampler", "POWERCAP", "CPUS"]

#: Where the powercap zones are.
POWERCAP = Path("/sys/class/powercap")
#: Where the CPUs' cpufreq directories are.
CPUS = Path("/sys/devices/system/cpu")

_ZONE = re.compile(r"intel-rapl:\d+$")  # a top-level zone: a package (or psys, left out)


class RaplSampler(Sampler):
    """Samples package power and core clocks; ``powercap`` and ``cpus`` replace the sysfs roots
    (tests)."""

    name = "rapl"

    def __init__(
        self, *, powercap: Union[str, Path] = POWERCAP, cpus: Union[str, Path] = CPUS, period_s: float = 0.02
    ) -> None:
        super().__init__(period_s=period_s)
        self.powercap = Path(powercap)
        self.cpus = Path(cpus)
        self._zones: List[Tuple[Path, int]] = []  # (energy_uj file, max_energy_range_uj)
        self._freqs: List[Path] = []
        self._last: Optional[Tuple[float, List[int]]] = None

    def open(self) -> str:
        """Find the readable package zones and cpufreq files; "" when either reads, else why not."""
        why_power = self._open_zones()
        self._freqs = [p for p in sorted(self.cpus.glob("cpu[0-9]*/cpufreq/scaling_cur_freq")) if _readable(p)]
        why_clock = "" if self._freqs else f"no readable {self.cpus}/cpu*/cpufreq/scaling_cur_freq"
        if why_power and why_clock:
            return f"power: {why_power}; clock: {why_clock}"
        if why_power:
            self.notes.append(f"power: {why_power}")
        if why_clock:
            self.notes.append(f"clock: {why_clock}")
        return ""

    def _open_zones(self) -> str:
        zones = [z for z in sorted(self.powercap.glob("intel-rapl:*")) if _ZONE.search(z.name)]
        zones = [z for z in zones if _text(z / "name", "package") != "psys"]
        if not zones:
            return f"no RAPL package zone under {self.powercap}"
        for z in zones:
            try:
                self._zones.append((z / "energy_uj", int((z / "max_energy_range_uj").read_text())))
                int((z / "energy_uj").read_text())
            except (OSError, ValueError) as exc:
                self._zones = []
                return f"RAPL energy counters are not readable ({one_line(exc)}; root only since Linux 5.10)"
        return ""

    def read(self) -> Mapping[str, float]:
        """One reading: ``power_w`` (from the second reading on) and ``cpu_clock_mhz``. Raises
        OSError or ValueError when a counter that read before no longer does."""
        out: Dict[str, float] = {}
        if self._zones:
            now, energies = clock(), [int(f.read_text()) for f, _ in self._zones]
            if self._last is not None:
                t0, before = self._last
                joules = sum(energy_delta_uj(b, a, rng) for b, a, (_f, rng) in zip(before, energies, self._zones)) / 1e6
                if now > t0:
                    out["power_w"] = joules / (now - t0)
            self._last = (now, energies)
        khz = [int(p.read_text()) for p in self._freqs]
        if khz:
            out["cpu_clock_mhz"] = sum(khz) / len(khz) / 1000.0
        return out


def energy_delta_uj(before: int, after: int, max_range_uj: int) -> int:
    """Microjoules between two readings of one counter that wraps to 0 after ``max_range_uj``."""
    return after - before if after >= before else after + max_range_uj - before


def _readable(p: Path) -> bool:
    try:
        int(p.read_text())
    except (OSError, ValueError):
        return False
    return True


def _text(p: Path, default: str) -> str:
    try:
        return p.read_text().strip()
    except OSError:
        return default
