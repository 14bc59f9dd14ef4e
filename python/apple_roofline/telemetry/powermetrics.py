"""Apple silicon through ``powermetrics`` (root only; docs/design/power.md, "Clocks and power").

``powermetrics --samplers gpu_power,cpu_power -f plist -i <ms>`` runs as a subprocess and writes
one XML property list per interval, each followed by a NUL byte; each is parsed with
:mod:`plistlib` (:func:`parse_plist`) into CPU, GPU and Neural Engine power (W), the GPU's active
frequency (MHz) and active residency (%) and each CPU cluster's frequency (MHz) and busy share. A
plist describes the interval before it was written (``elapsed_ns``, kept as ``interval_s``), so the
sampler's power readings reach back one interval (:attr:`PowermetricsSampler.power_average_s`). The
CPU's clock is the clusters' frequencies weighted by their busy time (``1 - idle_ratio``), not their
plain mean: an idle cluster parked at its lowest step says nothing of the clock the work ran at.

The keys (``processor``: ``cpu_power``, ``gpu_power``, ``ane_power`` in mW, or on older macOS
``*_energy`` in mJ over ``elapsed_ns``; ``processor.clusters[].freq_hz`` in Hz; ``gpu.freq_hz``,
which holds MHz despite its name, ``gpu.idle_ratio``, ``processor.clusters[].name`` and
``idle_ratio``) are those the open-source asitop reads
from the same command; ``powermetrics`` documents none of them.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import tempfile
import threading
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .base import Sampler, clock, one_line
from .window import CLUSTER_BUSY, CLUSTER_MHZ

__all__ = ["PowermetricsSampler", "parse_plist", "split_plists", "COMMAND", "DEFAULT_INTERVAL_MS"]

#: The command, without the interval.
COMMAND = ("powermetrics", "--samplers", "gpu_power,cpu_power", "-f", "plist")
#: Milliseconds between two plists.
DEFAULT_INTERVAL_MS = 100


def split_plists(buffer: bytes) -> Tuple[List[bytes], bytes]:
    """The complete NUL-terminated plists in ``buffer`` and the incomplete rest."""
    parts = buffer.split(b"\0")
    return [p for p in parts[:-1] if p.strip()], parts[-1]


def _number(v: object) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def parse_plist(d: Mapping[str, Any], target: str = "gpu") -> Dict[str, float]:
    """One ``powermetrics`` plist as values: ``interval_s`` (``elapsed_ns``), ``gpu_power_w``,
    ``cpu_power_w``, ``ane_power_w``, ``power_w`` (the ``target``'s, "gpu" or "cpu"), and the
    ``target``'s clock only (so that a reading's clock is always the measured part's): for the GPU
    ``gpu_clock_mhz`` (with ``gpu_busy_s``) and ``gpu_active_pct``, for the CPU per busy cluster
    ``cpu_cluster_mhz.<name>`` (with ``cpu_cluster_busy_s.<name>``) and ``cpu_clock_mhz`` (the busy
    clusters' frequencies weighted by busy time, with ``cpu_busy_s``), each where the plist has it;
    a busy time needs ``elapsed_ns`` (without it, one second stands for the interval, which only
    weights). Power is ``<x>_power`` (mW) or, where absent, ``<x>_energy`` (mJ) over
    ``elapsed_ns``. A GPU ``freq_hz`` above 100,000 is taken as Hz."""
    out: Dict[str, float] = {}
    proc = d.get("processor")
    proc = proc if isinstance(proc, Mapping) else {}
    gpu = d.get("gpu")
    gpu = gpu if isinstance(gpu, Mapping) else {}
    elapsed = _number(d.get("elapsed_ns"))
    seconds = elapsed / 1e9 if elapsed else 1.0
    if elapsed:
        out["interval_s"] = seconds
    for part in ("cpu", "gpu", "ane"):
        mw = _number(proc.get(f"{part}_power"))
        if mw is None:
            mj = _number(proc.get(f"{part}_energy"))
            if mj is None and part == "gpu":
                mj = _number(gpu.get("gpu_energy"))
            if mj is not None and elapsed:
                mw = mj / (elapsed / 1e9)
        if mw is not None:
            out[f"{part}_power_w"] = mw / 1000.0
    if f"{target}_power_w" in out:
        out["power_w"] = out[f"{target}_power_w"]
    if target == "gpu":
        _gpu_clock(out, gpu, seconds)
    else:
        _cpu_clock(out, proc, seconds)
    return out


def _gpu_clock(out: Dict[str, float], gpu: Mapping[str, Any], seconds: float) -> None:
    f = _number(gpu.get("freq_hz"))
    idle = _number(gpu.get("idle_ratio"))
    if idle is not None:
        out["gpu_active_pct"] = 100.0 * (1.0 - idle)
    if f is not None and (idle is None or idle < 1.0):
        out["gpu_clock_mhz"] = f / 1e6 if f > 1e5 else f
        out["gpu_busy_s"] = (1.0 - (idle or 0.0)) * seconds


def _cpu_clock(out: Dict[str, float], proc: Mapping[str, Any], seconds: float) -> None:
    clusters = proc.get("clusters")
    cycles = busy = 0.0
    for i, c in enumerate(clusters if isinstance(clusters, Sequence) else ()):
        hz = _number(c.get("freq_hz")) if isinstance(c, Mapping) else None
        if hz is None:
            continue
        share = 1.0 - (_number(c.get("idle_ratio")) or 0.0)
        if share <= 0:
            continue
        name = str(c.get("name") or f"cluster{i}")
        out[CLUSTER_MHZ + name], out[CLUSTER_BUSY + name] = hz / 1e6, share * seconds
        cycles += hz / 1e6 * share * seconds
        busy += share * seconds
    if busy > 0:
        out["cpu_clock_mhz"], out["cpu_busy_s"] = cycles / busy, busy


class PowermetricsSampler(Sampler):
    """Samples an Apple-silicon Mac through ``powermetrics`` (root only). ``target`` ("gpu" or
    "cpu") is the part whose power becomes ``power_w``. ``popen`` replaces :class:`subprocess.Popen`
    and ``is_root`` the effective-uid check (tests)."""

    name = "powermetrics"
    pushes = True

    def __init__(
        self,
        target: str = "gpu",
        *,
        interval_ms: int = DEFAULT_INTERVAL_MS,
        popen: Optional[Callable[..., Any]] = None,
        is_root: Optional[bool] = None,
    ) -> None:
        super().__init__(period_s=interval_ms / 1000.0)
        self.target = target
        self.interval_ms = int(interval_ms)
        #: One plist covers the interval before it.
        self.power_average_s = interval_ms / 1000.0
        self.power_source = f"powermetrics -i {self.interval_ms} ({target} power)"
        self._popen = popen or subprocess.Popen
        self._is_root = (hasattr(os, "geteuid") and os.geteuid() == 0) if is_root is None else is_root
        self._proc: Any = None
        self._reader: Optional[threading.Thread] = None
        self._err: Optional[IO[bytes]] = None  # powermetrics' stderr (open)

    def command(self) -> List[str]:
        """The command line run."""
        return [*COMMAND, "-i", str(self.interval_ms)]

    def open(self) -> str:
        """Start ``powermetrics``; "" when it started, else why not (not root, not found)."""
        if not self._is_root:
            return "powermetrics needs root (sudo); IOReport is used without it"
        if self._popen is subprocess.Popen and shutil.which(COMMAND[0]) is None:
            return "powermetrics is not on PATH"
        try:
            # stderr to a file, never a pipe: a pipe nobody reads while powermetrics runs fills
            # (64 KiB of warnings) and blocks it, and the power readings stop without a word.
            self._err = tempfile.TemporaryFile()
            self._proc = self._popen(self.command(), stdout=subprocess.PIPE, stderr=self._err)
        except OSError as exc:
            self._close_err()
            return f"cannot start powermetrics: {one_line(exc)}"
        return ""

    def start(self) -> "Sampler":
        """Start ``powermetrics`` (:meth:`open`) and the thread that reads its plists."""
        super().start()
        if self.active and self._proc is not None:
            self._reader = threading.Thread(
                target=self._read_stream, args=(self._proc.stdout,), name="telemetry-powermetrics", daemon=True
            )
            self._reader.start()
        return self

    def read(self) -> Mapping[str, float]:
        """Not polled: readings arrive from the subprocess (:meth:`_read_stream`)."""
        return {}

    def _read_stream(self, stream: IO[bytes]) -> None:
        rest = b""
        try:
            while True:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                if not chunk:
                    break
                plists, rest = split_plists(rest + chunk)
                for raw in plists:
                    self.add(parse_plist(plistlib.loads(raw.strip()), self.target), clock())
        except Exception as exc:  # a malformed plist or a closed pipe: recorded, never raised
            self.fail(f"powermetrics output unreadable: {one_line(exc)}")
            return
        if self.active:
            err = b""
            try:
                if self._err is not None:
                    self._err.seek(0)
                    err = self._err.read()
            except (OSError, ValueError):  # the file closed by close(): no reason text
                pass
            why = " ".join(err.decode(errors="replace").split())[-200:]
            self.fail(f"powermetrics exited{': ' + why if why else ''}")

    def close(self) -> None:
        """Stop the subprocess and its reader."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.terminate()
                proc.wait(timeout=2)
            except Exception:
                try:
                    proc.kill()
                except Exception:
                    pass
        if self._reader is not None:
            self._reader.join(timeout=2)
            self._reader = None
        self._close_err()

    def _close_err(self) -> None:
        err, self._err = self._err, None
        if err is not None:
            err.close()
