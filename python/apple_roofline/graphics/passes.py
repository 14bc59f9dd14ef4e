"""Measuring the passes of one graphics study (docs/design/graphics.md, "The graphics study"):
:class:`PassMeasurer` builds each fill and texture pass, chooses its layers, times it through the
study's :class:`~.pacing.Pacer`, and queues its check against the NumPy reference (:mod:`.checks`).
A tile-memory pass the fill-rate suite already measured in the study (rgba8unorm, opaque) is kept from
there, its ``measured_in`` parameter saying so, not drawn again.

Layers: a fill pass draws ``overdraw`` layers unless one pass would take longer than ``max_pass_s``;
then fewer (a power of two, at least :data:`MIN_LAYERS`), said in its ``layers`` parameter and a
warning: rates per pixel do not depend on the layer count. The seconds of one layer come from a probe
for the first two F of a (format, mode) ladder, and after them from the line through the last two
measured (:func:`ladder_layer_s`): no probe leaves the GPU idle between passes. A texture
pass draws as many identical layers (a power of two up to :data:`MAX_TEXTURE_LAYERS`) as make it about
:data:`TARGET_PASS_S` long, where the device counts fragment-shader invocations (the count, not the
layer count, gives the texels fetched); elsewhere one layer.

Budgets: besides the suite's check before each pass (:meth:`~apple_roofline.study.timing.SuiteClock.cut_here`),
a pass whose submission is predicted (:meth:`~.pacing.Pacer.predict_s`, once its seconds per pass are
known: from the shape's calibration, the ladder or its probe) to end past the suite's budget is not
started: the suite is cut before it, and a warning gives the seconds it would have taken and those left.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, Hashable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..errors import DeviceStopped
from ..study.journal import Journal, record_key
from ..study.records import Measurement, Skipped
from ..study.timing import SuiteClock
from .checks import Checks, result_or
from .grid import FillCase, TextureCase
from .kernels import (
    FLOPS_PER_ITERATION,
    FORMATS,
    TABLE_TEXELS,
    TEXTURE_FORMAT,
    bilinear_texels,
    check_target,
    fill_reference,
    texture_noise,
    texture_sums,
)
from .options import GraphicsOptions
from .pacing import Pacer, PassRun, PassTiming

__all__ = [
    "MIN_LAYERS",
    "MAX_TEXTURE_LAYERS",
    "TARGET_PASS_S",
    "AHEAD",
    "fill_layers",
    "ladder_layer_s",
    "texture_layers",
    "fitting",
    "PassMeasurer",
]

#: The fewest layers a long fill pass is reduced to (one layer of 1920 x 1080 is ample parallel work;
#: on an H100, whose graphics run on two TPCs, one layer at F = 512 takes 34 ms).
MIN_LAYERS = 1
#: The most layers of a texture pass.
MAX_TEXTURE_LAYERS = 64
#: Seconds a texture pass is drawn long enough to take (layers), so that a sample is a handful of
#: passes and the host encodes few of them.
TARGET_PASS_S = 1e-3
#: How many texture lines (size, pattern, filter) ahead of the pass being measured their references
#: are started.
AHEAD = 4


def _pow2_floor(x: float) -> int:
    return 1 << int(np.floor(np.log2(max(x, 1.0))))


def fill_layers(overdraw: int, per_layer_s: float, max_pass_s: float) -> int:
    """Layers of a fill pass: ``overdraw``, or, when that many would take longer than ``max_pass_s``
    at ``per_layer_s`` each, the largest power of two that fits, at least :data:`MIN_LAYERS` (and
    never more than ``overdraw``)."""
    if overdraw * per_layer_s <= max_pass_s or overdraw <= MIN_LAYERS:
        return overdraw
    return min(overdraw, max(MIN_LAYERS, _pow2_floor(max_pass_s / max(per_layer_s, 1e-12))))


def ladder_layer_s(measured: Dict[int, float], F: int) -> Optional[float]:
    """The seconds of one fill layer at ``F`` predicted from the seconds per layer ``measured`` at
    smaller F of the same format and mode ({F: seconds}, F = 0 included): a layer costs a + b·F (the
    chains' iterations after a fixed cost), so the line through the two largest measured F below ``F``,
    and never less than the larger of them (a layer does not get cheaper with more work); None with
    fewer than two (the pass is probed). On an H100 it comes within 5 % of the recorded layer times
    (tests/unit/data/graphics_h100.json) at every F from 2 to 512."""
    below = sorted(f for f in measured if f < F)
    if len(below) < 2:
        return None
    f0, f1 = below[-2:]
    t0, t1 = measured[f0], measured[f1]
    return max(t1, t1 + (t1 - t0) / (f1 - f0) * (F - f1))


def texture_layers(per_layer_s: float, target_s: float = TARGET_PASS_S, cap: int = MAX_TEXTURE_LAYERS) -> int:
    """Layers of a texture pass: the largest power of two whose pass lasts at most ``target_s`` at
    ``per_layer_s`` per layer, 1 to ``cap``."""
    return min(cap, _pow2_floor(target_s / max(per_layer_s, 1e-12)))


class PassMeasurer:
    """The state of one study's measuring: the device, the pacer, the checks, and what was measured.

    Args:
        dev: the graphics device (``fill_pass``, ``texture_pass``, ``max_texture``, ``statistics``).
        pacer: times each pass (:class:`~.pacing.Pacer`).
        checks: references and checks (:class:`~.checks.Checks`).
        options: the study's (:class:`~.options.GraphicsOptions`): the render target (``width``,
            ``height``, pixels), the layers requested per fill pass (``overdraw``), the longest fill
            pass before its layers are reduced (``pass_limit``, seconds), and the samples of a pass
            (its grid's :meth:`~.grid.Grid.samples` of ``reps``).
        journal: gets each pass once its check has given its verdict (from the checking thread);
            a pass its resumed journal holds is kept, not measured (docs/design/files.md, "Journal and
            resume"; keys ``"SUITE FORMAT F=F MODE STORE"``, ``"texture SIZE PATTERN FILTER xFETCHES"``).
    """

    def __init__(
        self, dev: Any, pacer: Pacer, checks: Checks, options: GraphicsOptions, journal: Optional[Journal] = None
    ) -> None:
        self.dev, self.pacer, self.checks, self.options = dev, pacer, checks, options
        self.journal = journal or Journal()
        self.width, self.height, self.overdraw = options.width, options.height, options.overdraw
        self.max_pass_s = options.pass_limit
        self.counting = bool(getattr(dev, "statistics", False))
        self.pending: List[Tuple[Dict[str, Any], Any]] = []  # (fields of a Measurement, its check)
        self.skipped: List[Skipped] = []
        self.warnings: List[str] = []
        self.layers: Dict[Hashable, int] = {}  # layers chosen per shape, shared by the passes of that shape
        self.layer_s: Dict[Tuple[str, str], Dict[int, float]] = {}  # (format, mode) -> {F: s per layer}
        self.lines: Dict[Tuple[str, str, int], Tuple[int, float]] = {}  # texture line -> (layers, s per pass)
        self.kept: Dict[str, Tuple[Dict[str, Any], Any]] = {}  # journal key -> (fields, check) of this study's passes

    def samples(self, suite: str, case: Tuple[Any, ...]) -> int:
        """Samples of pass ``case`` of ``suite``: its grid's (:meth:`~.grid.Grid.samples`) of the
        options' ``reps``."""
        return self.options.plan.samples(suite, case, self.options.reps)

    def fits(self, clock: SuiteClock, name: str, per_pass_s: Optional[float], reps: int, count: bool) -> bool:
        """Whether pass ``name`` (``per_pass_s`` seconds a pass, ``reps`` samples, counted or not) is
        predicted to end within ``clock``'s budget (always, without a budget or a per-pass time); if
        not, ``clock`` is marked cut before it and a warning says what it would have taken."""
        if clock.budget_s <= 0 or per_pass_s is None:
            return True
        left = clock.budget_s - (time.perf_counter() - clock.start)
        need = self.pacer.predict_s(per_pass_s, reps, count=count)
        if need <= left:
            return True
        clock.cut, clock.stopped_before = True, name
        self.warnings.append(
            f"{name}: not started: its passes would take about {need:.1f} s, and {max(left, 0.0):.1f} s of "
            f"the suite's {clock.budget_s:g} s budget were left"
        )
        return False

    def settle(self) -> None:
        """Wait for every check submitted so far."""
        for _fields, future in self.pending:
            if not future.cancelled():
                future.result()

    def collect(self) -> Tuple[Measurement, ...]:
        """The measurements so far, in order, each with its check's verdict (waits for the checks;
        one cancelled by an interrupt is left out)."""
        out = []
        for fields, future in self.pending:
            verdict = result_or(future)
            if verdict is None:
                continue
            ok, why = verdict
            out.append(Measurement(**fields, valid=ok, validation=why))
        return tuple(out)

    def _record(self, key: str, work: "_Work", timing: PassTiming, timer: str, check: "_Check") -> float:
        """Keep pass ``key`` (:meth:`_keep`): its Measurement's fields from ``work``, ``timing`` and
        ``timer``, and its check submitted; its seconds per pass."""
        params = {
            **work.case,
            "timer": timer,
            "batch": timing.batch,
            "lead_s": round(timing.lead_s, 4),
            **({"retried": True} if timing.retried else {}),
            **timing.summary,
        }
        fields: Dict[str, Any] = dict(
            suite=work.suite,
            kernel=work.kernel,
            dtype=work.dtype,
            params=params,
            flops=work.flops,
            bytes=max(work.nbytes, 1),
            samples_s=timing.samples_s,
            batch=timing.batch,
        )
        self._keep(key, fields, self.checks.check(check.got, check.want, check.compare))
        return timing.per_pass_s

    def _keep(self, key: str, fields: Dict[str, Any], verdict: "Future[Tuple[bool, str]]") -> None:
        """Keep pass ``key`` (its Measurement's ``fields`` and its check), journaled once checked."""
        # the callback holds the journal, not the measurer: a future keeps its callbacks, so one that
        # held the measurer would make a cycle through it to the device, freed later by the cycle
        # collector on whichever thread runs it (see wgpu_device.released_at_once for why that matters)
        jr = self.journal

        def journal(done: "Future[Tuple[bool, str]]") -> None:
            if not done.cancelled() and done.exception() is None:
                ok, why = done.result()
                jr.record(key, Measurement(**fields, valid=ok, validation=why).to_dict())

        verdict.add_done_callback(journal)
        self.pending.append((fields, verdict))
        self.kept[key] = (fields, verdict)

    def _shared(self, key: str, suite: str, twin: str) -> bool:
        """Whether pass ``twin`` (a journal key) was measured in this study; if so it is kept as pass
        ``key`` of ``suite`` too (the same pass: a tile-memory case the fill-rate suite measured),
        its ``measured_in`` parameter naming the suite that measured it."""
        done = self.kept.get(twin)
        if done is None:
            return False
        fields, verdict = done
        params = {**fields["params"], "measured_in": fields["suite"]}
        self._keep(key, {**fields, "suite": suite, "params": params}, verdict)
        return True

    def _resumed(self, key: str) -> bool:
        """Whether the resumed journal holds pass ``key``; if so the pass is kept in its place."""
        stored = self.journal.stored(key)
        if stored is None:
            return False
        m = Measurement.from_dict(stored, source=str(self.journal.path), where=key)
        verdict: "Future[Tuple[bool, str]]" = Future()
        verdict.set_result((m.valid, m.validation))
        fields = {f.name: getattr(m, f.name) for f in dataclasses.fields(m) if f.name not in ("valid", "validation")}
        self.pending.append((fields, verdict))
        return True

    def _prepare(self, cases: Sequence[FillCase]) -> None:
        """Build the pipelines of ``cases`` before the first pass (the device's ``prepare_fill``, where
        it has one): a pipeline is a shader compile, and compiled between two passes it would leave
        the GPU idle, and the next pass would pay twice that idle time in lead passes (:mod:`.pacing`)."""
        prepare = getattr(self.dev, "prepare_fill", None)
        if prepare is None:
            return
        for fmt, F, mode in dict.fromkeys((c[0], c[1], c[2]) for c in cases):
            try:
                prepare(fmt=fmt, F=F, blended=mode == "blended")
            except Exception:  # noqa: BLE001 - the pass itself raises it again and is skipped with its reason
                continue

    def _prepare_texture(self, cases: Sequence[TextureCase]) -> None:
        """Build the pipelines of the texture ``cases`` (one per pattern, filter and fetch count)
        before the first pass (the device's ``prepare_texture``, where it has one), as
        :meth:`_prepare` does for the fill suites: compiled before the first pass of its line, a
        pipeline would leave the GPU idle between two passes, and the next lead would pay twice
        that."""
        prepare = getattr(self.dev, "prepare_texture", None)
        if prepare is None:
            return
        for pattern, filter_, fetches in dict.fromkeys((c[1], c[2], c[3]) for c in cases):
            try:
                prepare(fetches=fetches, random=pattern == "random", bilinear=filter_ == "bilinear")
            except Exception:  # noqa: BLE001 - the pass itself raises it again and is skipped with its reason
                continue

    # -- fill rate and tile memory ------------------------------------------------------------

    def fill_cases(self, suite: str, cases: Sequence[FillCase], clock: SuiteClock) -> Iterator[str]:
        """Measure ``cases`` (format, F, mode, store) of ``suite``; yields one line per pass."""
        width, height = self.width, self.height
        for fmt, F in dict.fromkeys((c[0], c[1]) for c in cases):  # every reference started ahead
            self.checks.ahead(("fill", F, fmt), _fill_job(width, height, F, fmt))
        self._prepare(cases)
        for fmt, F, mode, store in cases:
            if clock.cut_here(f"{suite} {fmt} F={F} {mode} {store}"):
                return
            key = record_key(suite, fmt, f"F={F}", mode, store)
            if self._resumed(key):
                clock.measured += 1
                yield f"{fmt} F={F} {mode} {store}: resumed"
                continue
            if suite != "fillrate" and self._shared(key, suite, record_key("fillrate", fmt, f"F={F}", mode, store)):
                clock.measured += 1
                yield f"{fmt} F={F} {mode} {store}: the fillrate pass"
                continue
            try:
                drawn = self._fill_pass(suite, (fmt, F, mode, store), clock)
            except DeviceStopped:  # the device, not this pass: the study ends (the runner)
                raise
            except Exception as exc:  # noqa: BLE001 - a format or feature the device lacks: a skip with its reason
                self.skipped.append(
                    Skipped(suite, "fill", fmt, f"{mode}, {store}, F={F}: {type(exc).__name__}: {_first_line(exc)}")
                )
                yield f"{fmt} F={F} {mode} {store}: skipped"
                continue
            if drawn is None:  # not started: it would end past the suite's budget
                return
            line = self._record_fill(key, suite, (fmt, F, mode, store), drawn)
            clock.measured += 1
            yield line

    def _fill_pass(self, suite: str, c: FillCase, clock: SuiteClock) -> Optional["_PassRun"]:
        """Draw and time fill pass ``c`` of ``suite`` at its shape's layers (:meth:`_fill_layers`),
        its seconds per layer added to its (format, mode) ladder; None when :meth:`fits` says it
        would end past the suite's budget (not started).

        Raises:
            DeviceStopped: the device stopped responding.
            Exception: what the device raised for a format or feature it lacks.
        """
        fmt, F, mode, store = c
        shape = (fmt, F, mode)
        name = f"{suite} {fmt} F={F} {mode} {store}"  # the pass, as a device stop names it
        ladder = self.layer_s.setdefault((fmt, mode), {})
        layers, per_pass = self._fill_layers(suite, c, name, ladder)
        reps = self.samples(suite, (fmt, F, mode, store))
        if not self.fits(clock, name, self.pacer.per_pass.get((shape, layers)) or per_pass, reps, True):
            return None
        p = self._build_fill_pass(c, layers)
        timing, run = self.pacer.measure(p, (shape, layers), per_pass, count=True, name=name, reps=reps)
        invocations, got = run.invocations, _image(run)
        ladder[F] = timing.per_pass_s / layers
        return _PassRun(p, timing, layers, invocations, got)

    def _build_fill_pass(self, c: FillCase, layers: int) -> Any:
        """The device's fill pass of case ``c`` (format, F, mode, store action) at ``layers`` layers."""
        fmt, F, mode, store = c
        return self.dev.fill_pass(
            width=self.width,
            height=self.height,
            fmt=fmt,
            F=F,
            layers=layers,
            blended=mode == "blended",
            store=store == "store",
        )

    def _fill_layers(self, suite: str, c: FillCase, name: str, ladder: Dict[int, float]) -> Tuple[int, Optional[float]]:
        """``(layers, seconds per pass)`` of fill pass ``c``: the layers its shape (format, F, mode)
        already has (seconds unknown), or those :func:`fill_layers` gives at the seconds per layer its
        ladder predicts (:func:`ladder_layer_s`) or a probe measures, kept for the shape; a warning
        when they are fewer than the overdraw asked for."""
        fmt, F, mode, store = c
        shape = (fmt, F, mode)
        layers = self.layers.get(shape)
        if layers is not None:
            return layers, None
        per_layer = ladder_layer_s(ladder, F)
        if per_layer is None:
            probe_layers = min(self.overdraw, MIN_LAYERS)
            probe = self._build_fill_pass(c, probe_layers)
            per_layer = self.pacer.probe(probe, name) / probe_layers
        layers = self.layers[shape] = fill_layers(self.overdraw, per_layer, self.max_pass_s)
        if layers < self.overdraw:
            self.warnings.append(
                f"{suite} {fmt} F={F} {mode}: {layers} layer{'' if layers == 1 else 's'} instead of "
                f"{self.overdraw} "
                f"(one pass of {self.overdraw} would take about "
                f"{per_layer * self.overdraw * 1e3:.0f} ms)"
            )
        return layers, per_layer * layers

    def _record_fill(self, key: str, suite: str, c: FillCase, drawn: "_PassRun") -> str:
        """Keep fill pass ``c`` (:meth:`_record`) with its case's parameters, FLOPs and bytes, checked
        against its reference; its progress line."""
        fmt, F, mode, store = c
        blended = mode == "blended"
        layers, invocations = drawn.layers, drawn.invocations
        pixels = self.width * self.height
        shaded, shaded_by = _fill_shaded(blended, invocations, pixels, pixels * layers)
        bpp = FORMATS[fmt].bytes_per_pixel * (2 if blended else 1)
        case: Dict[str, Any] = {
            "F": F,
            "mode": mode,
            "store": store,
            "width": self.width,
            "height": self.height,
            "layers": layers,
            "overdraw_requested": self.overdraw,
            "pixels_drawn": pixels * layers,
            "pixels_shaded": shaded,
            "shaded_by": shaded_by,
            "tile_bytes_per_pixel": bpp,
            "dram_bytes": pixels * FORMATS[fmt].bytes_per_pixel if store == "store" else 0,
        }
        if invocations is not None:
            case["fragment_invocations"] = invocations
        want = self.checks.future(("fill", F, fmt))  # started ahead (fill_cases)

        def compare(
            got: np.ndarray, want: np.ndarray, fmt: str = fmt, discard: bool = store == "discard"
        ) -> Tuple[bool, str]:
            ok, why = check_target(got, want, FORMATS[fmt].storage)
            return ok, (why + " (the pipeline, checked on one pass with store action store)" if discard else why)

        work = _Work(suite, "fill", fmt, case, shaded * FLOPS_PER_ITERATION * F, shaded * bpp)
        median = self._record(key, work, drawn.timing, drawn.p.timer, _Check(drawn.got, want, compare))
        return f"{fmt} F={F} {mode} {store}: {pixels * layers / median / 1e9:.1f} GPixel/s drawn"

    # -- texture cache --------------------------------------------------------------------------

    def texture_cases(self, cases: Sequence[TextureCase], clock: SuiteClock) -> Iterator[str]:
        """Measure the texture ``cases`` (size, pattern, filter, fetches) the device allows; yields one
        line per pass. References are built a few (size, pattern, filter) lines ahead; the bilinear
        lines of one size share its table of filtered texels (:func:`~.kernels.bilinear_texels`)."""
        fits = fitting(cases, self.dev)
        for size in sorted({c[0] for c in cases if c not in fits}):
            self.skipped.append(
                Skipped(
                    "texture",
                    "texture",
                    TEXTURE_FORMAT,
                    f"size {size}x{size} exceeds the device's largest 2D texture ({_limit(self.dev)})",
                )
            )
        self._prepare_texture(fits)
        refs = _TextureRefs(self.checks, fits, self.width, self.height)
        for i, (size, pattern, filter_, fetches) in enumerate(fits):
            if clock.cut_here(f"texture {size}x{size} {pattern} {filter_} x{fetches}"):
                return
            line = (size, pattern, filter_)
            key = record_key("texture", size, pattern, filter_, f"x{fetches}")
            if self._resumed(key):
                clock.measured += 1
                refs.done(i, line)
                yield f"{size}² {pattern} {filter_} x{fetches}: resumed"
                continue
            refs.start(refs.lines.index(line))
            try:
                drawn = self._texture_pass((size, pattern, filter_, fetches), refs, clock)
            except DeviceStopped:  # the device, not this pass: the study ends (the runner)
                raise
            except Exception as exc:  # noqa: BLE001 - e.g. a device that cannot render into rgba32float
                self.skipped.append(
                    Skipped(
                        "texture",
                        "texture",
                        TEXTURE_FORMAT,
                        f"{size}x{size} {pattern} {filter_} x{fetches}: {type(exc).__name__}: {_first_line(exc)}",
                    )
                )
                yield f"{size}² {pattern} {filter_} x{fetches}: skipped"
                continue
            if drawn is None:  # not started: it would end past the suite's budget
                return
            text = self._record_texture(
                key, (size, pattern, filter_, fetches), drawn, self.checks.future(("texture",) + line)
            )
            clock.measured += 1
            refs.done(i, line)
            yield text

    def _texture_pass(self, c: TextureCase, refs: "_TextureRefs", clock: SuiteClock) -> Optional["_PassRun"]:
        """Draw and time texture pass ``c`` at its line's layers (:meth:`_texture_layers`), kept for
        the line with its seconds per pass; None when :meth:`fits` says it would end past the suite's
        budget (not started).

        Raises:
            DeviceStopped: the device stopped responding.
            Exception: what the device raised (e.g. a target format it cannot render into).
        """
        size, pattern, filter_, fetches = c
        name = f"texture {size}x{size} {pattern} {filter_} x{fetches}"  # the pass, as a device stop names it
        texture = refs.noise(size)
        shape = (size, pattern, filter_, fetches)
        layers, per_pass = self._texture_layers(shape, texture, name)
        p = self.dev.texture_pass(
            width=self.width,
            height=self.height,
            texture=texture,
            fetches=fetches,
            random=pattern == "random",
            bilinear=filter_ == "bilinear",
            layers=layers,
        )
        per_pass = self.pacer.per_pass.get(shape) or per_pass or self.pacer.probe(p, name)
        reps = self.samples("texture", (size, pattern, filter_, fetches))
        if not self.fits(clock, name, per_pass, reps, self.counting):
            return None
        timing, run = self.pacer.measure(p, shape, per_pass, count=self.counting, name=name, reps=reps)
        invocations, got = run.invocations, _image(run)
        self.lines[shape[1:]] = (layers, timing.per_pass_s)
        return _PassRun(p, timing, layers, invocations, got)

    def _texture_layers(self, shape: TextureCase, texture: np.ndarray, name: str) -> Tuple[int, Optional[float]]:
        """``(layers, seconds per pass)`` of texture pass ``shape``: its line's (pattern, filter,
        fetches) from the size before (a cliff changes them, and the next measurement recalibrates);
        for a line's first size, where the device counts invocations, :func:`texture_layers` at the
        seconds of a probed one-layer pass; else one layer, seconds unknown."""
        size, pattern, filter_, fetches = shape
        known = self.lines.get(shape[1:])
        layers, per_pass = known if known is not None else (1, None)
        if known is None and self.counting:
            one = self.dev.texture_pass(
                width=self.width,
                height=self.height,
                texture=texture,
                fetches=fetches,
                random=pattern == "random",
                bilinear=filter_ == "bilinear",
                layers=1,
            )
            per_layer = self.pacer.probe(one, name)
            layers = texture_layers(per_layer)
            per_pass = per_layer * layers
        return layers, per_pass

    def _record_texture(self, key: str, c: TextureCase, drawn: "_PassRun", want_line: Callable[[], Any]) -> str:
        """Keep texture pass ``c`` (:meth:`_record`) with its case's parameters and texels fetched,
        checked against its line's sums (``want_line``); its progress line."""
        size, pattern, filter_, fetches = c
        layers, invocations = drawn.layers, drawn.invocations
        pixels = self.width * self.height
        if invocations is not None:
            shaded, shaded_by = min(invocations, pixels * layers), "counter"
        else:
            shaded, shaded_by = pixels, "one layer"
        texels = shaded * fetches
        case = {
            "size": size,
            "pattern": pattern,
            "filter": filter_,
            "fetches": fetches,
            "width": self.width,
            "height": self.height,
            "layers": layers,
            "pixels_shaded": shaded,
            "shaded_by": shaded_by,
            "texels": texels,
            "working_set_bytes": size * size * 4,
        }

        def compare(
            got: np.ndarray,
            sums: Dict[int, np.ndarray],
            fetches: int = fetches,
            bilinear: bool = filter_ == "bilinear",
        ) -> Tuple[bool, str]:
            return check_target(got, sums[fetches], "f32", fetches=fetches, bilinear=bilinear)

        work = _Work("texture", "texture", TEXTURE_FORMAT, case, 0, texels * (16 if filter_ == "bilinear" else 4))
        median = self._record(key, work, drawn.timing, drawn.p.timer, _Check(drawn.got, want_line, compare))
        drew = f"{layers} layer{'' if layers == 1 else 's'}"
        return f"{size}² {pattern} {filter_} x{fetches} ({drew}): {texels / median / 1e9:.1f} GTexel/s"


class _Work(NamedTuple):
    """One pass as its Measurement records it: suite, kernel and dtype, its case's parameters, and
    the FLOPs and bytes of one pass."""

    suite: str
    kernel: str
    dtype: str
    case: Dict[str, Any]
    flops: int
    nbytes: int


class _Check(NamedTuple):
    """A pass's check: the target it drew, its reference (a callable that waits for it) and how the
    two compare."""

    got: np.ndarray
    want: Callable[[], Any]
    compare: Callable[[np.ndarray, Any], Tuple[bool, str]]


class _PassRun(NamedTuple):
    """A pass drawn and timed: the device's pass, its timing, its layers, the fragment-shader
    invocations the device counted (None where it counts none) and the target it drew."""

    p: Any
    timing: PassTiming
    layers: int
    invocations: Optional[int]
    got: np.ndarray


def _fill_shaded(blended: bool, invocations: Optional[int], pixels: int, drawn: int) -> Tuple[int, str]:
    """``(pixels shaded, how that is known)`` of a fill pass of ``drawn`` pixels (``pixels`` a
    layer): every one when blended, else the device's count of invocations where it has one (at most
    ``drawn``), else one layer at least (the hidden layers may be culled)."""
    if blended:
        return drawn, "blended"
    if invocations is not None:
        return min(invocations, drawn), "counter"
    return pixels, "one layer at least"


class _TextureRefs:
    """The texture suite's references over the passes ``fits``: per size its noise texture and (for
    the bilinear lines) its table of filtered texels, per line (size, pattern, filter) the sums of its
    fetch counts; each started a few lines ahead of the pass being measured (:data:`AHEAD`) and
    dropped after the last pass that needs it."""

    def __init__(self, checks: Checks, fits: Sequence[TextureCase], width: int, height: int) -> None:
        self.checks, self.fits, self.width, self.height = checks, fits, width, height
        self.lines = list(dict.fromkeys((c[0], c[1], c[2]) for c in fits))
        self.counts = {line: sorted({c[3] for c in fits if c[:3] == line}) for line in self.lines}
        self.last = {line: max(i for i, c in enumerate(fits) if c[:3] == line) for line in self.lines}

    def noise(self, size: int) -> np.ndarray:
        """The noise texture of ``size``, built now if it was not started; waits for it."""
        image: np.ndarray = self.checks.reference(("noise", size), _noise_job(size))
        return image

    def start(self, i: int) -> None:
        """Start the references of the lines from line ``i`` on: the textures of the next
        2 × :data:`AHEAD` lines first (the measuring thread needs them next), then the bilinear
        tables and the sums of the next :data:`AHEAD`."""
        for line in self.lines[i : i + 2 * AHEAD]:  # textures first: the measuring thread needs them next
            self.checks.ahead(("noise", line[0]), _noise_job(line[0]))
        for line in self.lines[i : i + AHEAD]:
            if ("texture",) + line in self.checks:
                continue
            # A job holds the futures of the texture and of its bilinear table, each submitted
            # before it: a worker never waits for work queued behind it.
            texture = self.checks.future(("noise", line[0]))
            table: Callable[[], Any] = _no_table  # nearest, or a texture too large for a table
            if line[2] == "bilinear" and line[0] ** 2 <= TABLE_TEXELS:  # one table per size, for both patterns
                self.checks.ahead(("table", line[0]), _table_job(texture))
                table = self.checks.future(("table", line[0]))
            self.checks.ahead(
                ("texture",) + line, _sums_job(self.width, self.height, line, self.counts[line], texture, table)
            )

    def done(self, i: int, line: Tuple[int, str, str]) -> None:
        """Drop the references no pass after pass ``i`` (of ``line``) needs."""
        if i == self.last[line]:
            self.checks.drop(("texture",) + line)
        if not any(c[0] == line[0] for c in self.fits[i + 1 :]):
            self.checks.drop(("noise", line[0]))
        if not any(c[0] == line[0] and c[2] == "bilinear" for c in self.fits[i + 1 :]):
            self.checks.drop(("table", line[0]))


def fitting(cases: Sequence[TextureCase], dev: Any) -> List[TextureCase]:
    """The texture ``cases`` whose size is at most the device's largest 2D texture (``max_texture``;
    any size where it is 0 or absent), in order."""
    limit = _limit(dev)
    return [c for c in cases if not limit or c[0] <= limit]


def _limit(dev: Any) -> int:
    return int(getattr(dev, "max_texture", 0) or 0)


def _image(run: PassRun) -> np.ndarray:
    if run.image is None:
        raise RuntimeError("the pass returned no target to validate")
    image: np.ndarray = run.image
    return image


def _fill_job(width: int, height: int, F: int, fmt: str) -> Callable[[], np.ndarray]:
    return lambda: fill_reference(width, height, F, fmt)


def _noise_job(size: int) -> Callable[[], np.ndarray]:
    return lambda: texture_noise(size)


def _sums_job(
    width: int,
    height: int,
    line: Tuple[int, str, str],
    counts: Sequence[int],
    texture: Callable[[], Any],
    table: Callable[[], Any],
) -> Callable[[], Dict[int, np.ndarray]]:
    """The job of a texture line's reference: its sums at every fetch count of ``counts``
    (:func:`~.kernels.texture_sums`), from the texture's and the table's futures."""
    return lambda: texture_sums(texture(), width, height, line[1], line[2], counts, table())


def _table_job(texture: Callable[[], Any]) -> Callable[[], np.ndarray]:
    return lambda: bilinear_texels(texture())


def _no_table() -> None:
    return None


def _first_line(exc: BaseException) -> str:
    """The reason a device gave, on one line (wgpu's validation errors span several: the last
    non-empty one names the cause, e.g. "Format Rgba32Float is not renderable")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__
