"""Measuring one case of a suite: time it, validate it, record it (shared by the roofline runner and
the threadgroup-size tuning study, docs/design/measurement.md, "Measurement" and "Validation")."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Mapping, Optional, Tuple

from ...study.records import BLOCK_PARAM, TIMER_PARAM, Measurement, ParamValue
from ...suites import Case
from ...telemetry import Sampler
from ...timing.clocks import effective_clock
from ...timing.measure import Timing, time_kernel

__all__ = ["measurement_params", "time_case", "judge"]


def measurement_params(
    params: Mapping[str, ParamValue], timer: str, timing: Timing, sampler: Optional[Sampler] = None
) -> Dict[str, ParamValue]:
    """A measurement's parameters: the case's ``params``; ``timer`` (as :data:`~.records.TIMER_PARAM`)
    where the backend has more than one clock (Metal); the clocks and power ``sampler`` read over
    the window of the timed samples (``timing.window``, docs/design/power.md, "Clocks and power"), where
    it reads and the window is known; and the effective clock of the samples, measured by the
    backend (``timing.clock``) or else the sampler's reported clock, labelled
    (:func:`~apple_roofline.timing.clocks.effective_clock`, docs/design/clocks.md, "Clocks")."""
    out: Dict[str, ParamValue] = dict(params)
    if timer:
        out[TIMER_PARAM] = timer
    t0, t1 = timing.window
    reported: Dict[str, ParamValue] = {}
    if sampler is not None and t1 > t0:
        reported = dict(sampler.window(t0, t1))
        out.update(reported)
    name = target = ""
    if sampler is not None and sampler.active:
        name, target = sampler.name, str(getattr(sampler, "target", "") or "")
    out.update(effective_clock(timing.clock, reported, name, target))
    return out


def time_case(
    case: Case,
    kernel: Any,
    *,
    reps: int,
    max_warmup_s: float,
    sampler: Optional[Sampler] = None,
    extra: Optional[Mapping[str, ParamValue]] = None,
    min_window_s: float = 0.0,
) -> Measurement:
    """Time ``kernel`` (``case.make_kernel()``'s result) on ``case`` with
    :func:`~apple_roofline.timing.measure.time_kernel`: its Measurement before the check (``valid`` True, no
    ``validation``, no ``case.note``); :func:`judge` gives it the check's verdict,
    ``judge(case, time_case(...), case.check())``. Its parameters are :func:`measurement_params` plus
    :data:`BLOCK_PARAM` (``kernel.block``, where non-zero) and ``extra``. FLOPs and bytes are the
    case's, from the kernel table. ``min_window_s`` > 0 (seconds) lengthens the timed samples to at
    least that long in all (``run --power-window``).

    Raises:
        _core.BackendError: subclasses, when the device fails.
    """
    timing = time_kernel(
        kernel, case.args, case.work_items, reps=reps, max_warmup_s=max_warmup_s, min_window_s=min_window_s
    )
    params = measurement_params(case.params, str(getattr(kernel, "timer", "") or ""), timing, sampler)
    block = int(getattr(kernel, "block", 0) or 0)
    if block:
        params[BLOCK_PARAM] = block
    params.update(extra or {})
    k = case.kernel
    return Measurement(
        suite=k.suite,
        kernel=k.name,
        dtype=k.dtype,
        params=params,
        flops=int(case.flops),
        bytes=int(case.bytes),
        samples_s=timing.samples_s,
        valid=True,
        ceiling_class=k.ceiling_class,
        ceiling_kind=k.ceiling_kind,
        batch=timing.batch,
    )


def judge(case: Case, timed: Measurement, verdict: Tuple[bool, str]) -> Measurement:
    """``timed`` (:func:`time_case`'s) with ``case``'s check verdict ``(ok, message)``: invalid when
    the check failed; valid with ``case.note(samples)`` added to its parameters where the case has one."""
    ok, message = verdict
    params = dict(timed.params)
    note = getattr(case, "note", None)
    if ok and note is not None:
        params.update(note(timed.samples_s))
    return dataclasses.replace(timed, params=params, valid=bool(ok), validation=message)
