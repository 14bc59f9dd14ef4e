"""Two paths to one GPU (docs/compare.md, "Two paths to one GPU"): a run through the GPU's native
backend (CUDA, or Metal on a Mac) and a run through WebGPU (``--device wgpu:N``), each measured
ceiling side by side with what the WebGPU path reached of the native one.

Runs of one GPU are those whose devices have the same name (case and spacing aside: CUDA's and
Vulkan's ``"NVIDIA H200"``, Metal's ``MTLDevice.name`` and wgpu's Metal adapter ``"Apple M5"``); a
pair from two hosts is kept and its title says so. A ceiling is matched by kind and name among the
measured ones. Where the native figure lies below :data:`NATIVE_BELOW` × the WebGPU one, the row is
flagged as a defect of the native path: the same GPU ran the same computation faster through a
second, independently maintained route (wgpu), so the native backend left that much on the table,
and the flag says to report it. A ceiling only the native path has gives the WebGPU run's reason
where the run recorded one (a skipped kernel of the ceiling's suite and type, else the device's
``not_reachable`` list in the notes).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from ...study.records import Ceiling
from ...study.table import Table
from ...text import DASH, sig_figs
from ..model.run import Run

__all__ = [
    "NATIVE_BELOW",
    "NATIVE_BACKENDS",
    "WEBGPU_BACKEND",
    "NATIVE_DEFECT",
    "same_gpu",
    "path_pairs",
    "paths_table",
    "native_defects",
]

#: The WebGPU backend's name in a run's device.
WEBGPU_BACKEND = "wgpu"
#: The native backends a WebGPU run of the same GPU is set beside, by the name the tables use.
NATIVE_BACKENDS: Dict[str, str] = {"cuda": "CUDA", "metal": "Metal"}
#: The native figure below this × the WebGPU one is flagged as a native-path defect. On an H200 the
#: two paths' eight shared measured ceilings lay within 0.943–1.003× of each other in one lease
#: (bench/README.md, "WebGPU against the CUDA backend"), so 0.8 is far outside what the paths differ by
#: when both work.
NATIVE_BELOW = 0.8
#: The flag of a ceiling whose native figure is below :data:`NATIVE_BELOW` × WebGPU's.
NATIVE_DEFECT = "native path far below WebGPU: a defect of the native path, to report"


def _gpu_key(run: Run) -> str:
    return re.sub(r"\s+", " ", run.device_name).strip().casefold()


def same_gpu(a: Run, b: Run) -> bool:
    """Whether runs ``a`` and ``b`` measured one GPU model: their device names match, case and
    spacing aside (the module docstring)."""
    return bool(_gpu_key(a)) and _gpu_key(a) == _gpu_key(b)


def path_pairs(runs: Sequence[Run]) -> List[Tuple[int, int]]:
    """``(native, webgpu)`` indices into ``runs``: every native-backend run (:data:`NATIVE_BACKENDS`)
    with every WebGPU run of the same GPU (:func:`same_gpu`), in the order given."""
    return [
        (i, j)
        for i, a in enumerate(runs)
        if a.backend in NATIVE_BACKENDS
        for j, b in enumerate(runs)
        if b.backend == WEBGPU_BACKEND and same_gpu(a, b)
    ]


def _is_defect(native: Ceiling, webgpu: Ceiling) -> bool:
    """Whether the native figure lies below :data:`NATIVE_BELOW` × the WebGPU one (both in one unit)."""
    return native.value < NATIVE_BELOW * webgpu.value


def _measured(run: Run) -> Dict[Tuple[str, str], Ceiling]:
    return {(c.kind, c.name): c for c in run.ceilings if c.source == "measured"}


def _skip_reason(ceiling: Ceiling, webgpu: Run) -> str:
    """The WebGPU run's reason for not having ``ceiling``: a skipped kernel of the ceiling's suite
    and type (its ``from`` label ``suite/kernel/type``), the same kernel first; "" for none."""
    parts = ceiling.from_.split(" ", 1)[0].split("/")
    if len(parts) < 3:
        return ""
    suite, kernel, dtype = parts[0], parts[1], parts[2]
    same_type = [s for s in webgpu.skipped if s.suite == suite and s.dtype in (dtype, "all")]
    exact = [s for s in same_type if s.kernel == kernel]
    found = exact or same_type
    if found:
        return found[0].reason
    if any(m.suite == suite for m in webgpu.measurements):
        return f"its {suite} measurements set no such ceiling"
    return ""


def _verdict(native: Optional[Ceiling], webgpu: Optional[Ceiling], webgpu_run: Run) -> Tuple[str, str]:
    """``(ratio, what it means)`` of one ceiling's row."""
    if native is not None and webgpu is not None:
        ratio = webgpu.value / native.value
        return f"{ratio:.3f}×", NATIVE_DEFECT if _is_defect(native, webgpu) else ""
    if native is not None:
        why = _skip_reason(native, webgpu_run)
        if why.lower().startswith("not reachable through webgpu"):
            return DASH, why
        return DASH, f"not measured through WebGPU: {why}" if why else "not measured through WebGPU"
    return DASH, "measured through WebGPU only"


def _summary(ratios: Sequence[float], name: str) -> str:
    if not ratios:
        return "No measured ceiling is in both runs."
    lo, hi = min(ratios), max(ratios)
    span = f"{lo:.3f}×" if lo == hi else f"{lo:.3f}–{hi:.3f}×"
    return f"WebGPU reached {span} of the {name} path's figure on the {len(ratios)} measured ceilings both have."


def paths_table(runs: Sequence[Run], tags: Sequence[str], native: int, webgpu: int) -> Tuple[str, Table]:
    """The section of the pair ``(native, webgpu)`` (indices into ``runs``, tagged ``tags``): its title
    and a table of every measured ceiling either run has (name, unit, the native value, the WebGPU
    value, WebGPU / native, and the flag or the reason), native order first. Notes: the summary of
    the ratios, the rule of the flag, and the WebGPU device's ``not_reachable`` list."""
    a, b = runs[native], runs[webgpu]
    name = NATIVE_BACKENDS[a.backend]
    api = str(b.device.get("api", "") or "")
    mine, theirs = _measured(a), _measured(b)
    rows, ratios = [], []
    for key in list(mine) + [k for k in theirs if k not in mine]:
        n, w = mine.get(key), theirs.get(key)
        ratio, verdict = _verdict(n, w, b)
        if n is not None and w is not None:
            ratios.append(w.value / n.value)
        unit = n.unit if n is not None else theirs[key].unit
        rows.append(
            (key[1], unit, sig_figs(n.value) if n else DASH, sig_figs(w.value) if w else DASH, ratio, verdict or DASH)
        )
    hosts = {str(r.host.get("hostname", "") or "") for r in (a, b)}
    where = f" (two hosts: {', '.join(sorted(h or '?' for h in hosts))})" if len(hosts) > 1 else ""
    route = f"WebGPU on {api}" if api else "WebGPU"
    title = f"Two paths to {a.device_name}: {name} ({tags[native]}) and {route} ({tags[webgpu]}){where}"
    notes = [
        _summary(ratios, name),
        f"A native figure below {NATIVE_BELOW:g}× the WebGPU one is flagged: the same GPU ran the same "
        "computation faster through wgpu, so the native backend has a defect to report.",
    ]
    unreachable = b.device.get("not_reachable") or {}
    if isinstance(unreachable, dict) and unreachable:
        notes.append("Not reachable through WebGPU: " + "; ".join(f"{k}: {v}" for k, v in unreachable.items()) + ".")
    head = ("Ceiling", "Unit", f"{name} ({tags[native]})", f"WebGPU ({tags[webgpu]})", "WebGPU / native", "Note")
    return title, Table(head, tuple(rows), "llrrrl", tuple(notes))


def native_defects(runs: Sequence[Run], tags: Sequence[str]) -> List[str]:
    """One line per flagged ceiling of every pair (:func:`path_pairs`): ``"FP32 vector: CUDA (A)
    40,000 GFLOP/s is 0.61× WebGPU (B) 65,700 — native path far below WebGPU ..."``; empty when
    none is flagged."""
    out = []
    for i, j in path_pairs(runs):
        mine, theirs = _measured(runs[i]), _measured(runs[j])
        name = NATIVE_BACKENDS[runs[i].backend]
        for key, n in mine.items():
            w = theirs.get(key)
            if w is not None and _is_defect(n, w):
                out.append(
                    f"{key[1]}: {name} ({tags[i]}) {sig_figs(n.value)} {n.unit} is {n.value / w.value:.2f}× "
                    f"WebGPU ({tags[j]}) {sig_figs(w.value)}: {NATIVE_DEFECT}"
                )
    return out
