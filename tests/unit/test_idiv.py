"""The idiv suite without a device: the NumPy reference against C semantics, the chain's
non-degeneracy, counting, the divisor check, exact validation, opt-in selection and the report's
"Integer divide" section on a synthetic run."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.options import parse_suites
from apple_roofline.roofline.views.html import to_html
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.records import Ceiling, Measurement
from apple_roofline.suites.base import SuiteContext
from apple_roofline.suites.build import KernelBuild
from apple_roofline.suites.idiv import suite as idiv_suite
from apple_roofline.suites.idiv.kernels import (
    IDIV_DIVISOR,
    IDIV_F,
    IDIV_KERNELS,
    STEP,
    IdivKernel,
    check_divisor,
    check_exact,
    idiv_input,
)
from apple_roofline.suites.idiv.suite import IDIV_ITEMS_QUICK, IdivSuite, idiv_case
from apple_roofline.suites.idiv.table import idiv_table
from apple_roofline.suites.registry import default_suites, suite_names
from apple_roofline.text import DASH

# ---- the reference ----------------------------------------------------------------------------------


def _c_step(x: int, k: IdivKernel, d: int) -> int:
    """One step in plain Python with C's semantics: truncating signed division, wrapping additions."""
    if k.signed:
        s = x - (1 << 32) if x >= 1 << 31 else x
        q = abs(s) // d * (1 if s >= 0 else -1)
        v = q if k.op == "div" else s - q * d
    else:
        v = x // d if k.op == "div" else x % d
    return (x + v + STEP) % (1 << 32)


EDGES = np.array([0, 1, 254, 255, 256, 257, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 256, 2**32 - 1], np.uint32)


@pytest.mark.parametrize("k", IDIV_KERNELS, ids=lambda k: k.entry)
def test_reference_follows_c_semantics(k: IdivKernel) -> None:
    x = np.concatenate([EDGES, idiv_input()[:53]])
    F = 9
    got = k.reference(x, F)
    for xi, gi in zip(x.tolist(), got.tolist()):
        want = xi
        for _ in range(F):
            want = _c_step(want, k, k.divisor())
        assert gi == want, f"{k.entry}: x={xi}"


@pytest.mark.parametrize("k", IDIV_KERNELS, ids=lambda k: k.entry)
def test_chain_never_repeats_a_value(k: IdivKernel) -> None:
    """No trajectory of the input pattern (or the edge values) revisits a state within IDIV_F steps,
    so every step changes the output: a kernel that ran fewer steps, or none, fails validation."""
    x = np.concatenate([EDGES, idiv_input()])
    states = np.sort(k.reference(x, IDIV_F, trajectory=True), axis=0)
    assert not np.any(states[1:] == states[:-1]), k.entry
    # x + (x % 256) is not one-to-one, so a few trajectories merge (3 % of them for mod 256)
    assert np.unique(states[-1]).size > 0.95 * x.size, "outputs collapse onto few values"


# ---- the divisor ------------------------------------------------------------------------------------


def test_divisor_zero_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError) as e:
        check_divisor(0)
    assert str(e.value) == "idiv: divisor 0 divides by zero"


@pytest.mark.parametrize("d", [1, 2, -255, 2**31, 3.0, True, "255", None])
def test_divisor_outside_the_range_is_refused(d: Any) -> None:
    with pytest.raises(ValueError, match=r"^idiv: divisor .* must be an integer from 3 to 2147483647$"):
        check_divisor(d)


@pytest.mark.parametrize("d", [3, 7, 255, 2**31 - 1, np.int64(255)])
def test_divisor_in_range_is_accepted(d: Any) -> None:
    assert check_divisor(d) == int(d)


# ---- cases, counting and validation with a fake backend ---------------------------------------------


class _Buf:
    def __init__(self, nbytes: int) -> None:
        self.data = np.zeros(nbytes, np.uint8)
        self.writes = 0

    def write(self, a: np.ndarray, offset: int) -> None:
        b = np.ascontiguousarray(a).view(np.uint8)
        self.data[offset : offset + b.size] = b
        self.writes += 1

    def view(self, dtype: str) -> np.ndarray:
        return self.data.view(dtype)


class _Kernel:
    def __init__(self, wave: int) -> None:
        self.wave_items = wave


class _Backend:
    def __init__(self, wave: int = 0) -> None:
        self.bufs: List[_Buf] = []
        self.compiled: List[Any] = []
        self.wave = wave

    def alloc(self, nbytes: int) -> _Buf:
        self.bufs.append(_Buf(nbytes))
        return self.bufs[-1]

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> _Kernel:
        self.compiled.append((source, entry, dict(constants)))
        return _Kernel(self.wave)


@pytest.fixture(autouse=True)
def _no_native_wave_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unit tier has no native module: the wave probe asks the fake backend directly (the real
    one only adds catching the native BackendError)."""
    monkeypatch.setattr(
        idiv_suite,
        "wave_items",
        lambda backend, src, consts: int(backend.compile(src[0], src[1], dict(consts)).wave_items),
    )


def _suite(backend_name: str, quick: bool = True, wave: int = 0) -> "tuple[IdivSuite, _Backend]":
    b = _Backend(wave)
    return IdivSuite(SuiteContext(b, backend_name, {"backend": backend_name}, quick, 1 << 20)), b


@pytest.mark.parametrize("backend_name", ["cpu", "cuda", "metal"])
def test_cases_count_ops_and_bytes(backend_name: str) -> None:
    suite, b = _suite(backend_name)
    cases = list(suite.cases())
    assert suite.total() == len(cases) == 16
    assert len({(c.kernel.name, c.kernel.dtype) for c in cases}) == 16
    for c in cases:
        assert c.work_items == IDIV_ITEMS_QUICK
        assert c.flops == IDIV_F * IDIV_ITEMS_QUICK and c.bytes == 8 * IDIV_ITEMS_QUICK
        assert c.kernel.ceiling_class is None and c.kernel.suite == "idiv"
        scalars = c.args[2:]
        assert scalars == ([IDIV_DIVISOR] if c.kernel.name.endswith("_argument") else [])
        assert c.params["divisor"] == (256 if "pow2" in c.kernel.name else IDIV_DIVISOR)
        c.make_kernel()
    consts = [k[2] for k in b.compiled]
    want = {
        "cpu": {"F": IDIV_F},
        "cuda": {"BLOCK": 256, "DIVISOR": IDIV_DIVISOR, "F": IDIV_F},
        "metal": {"DIVISOR": IDIV_DIVISOR, "F": IDIV_F},
    }[backend_name]
    assert all(c == want for c in consts), consts
    assert len(b.bufs) == 2, "one input and one output buffer for every case"


def test_gpu_launches_are_whole_waves() -> None:
    """Where the kernel reports wave_items, a launch is a whole number of waves, at least MIN_WAVES."""
    suite, b = _suite("cuda", quick=True, wave=100_000)
    cases = list(suite.cases())
    assert all(c.work_items == 4 * 100_000 and c.params["waves"] == 4 for c in cases)
    assert all(c.flops == IDIV_F * c.work_items and c.bytes == 8 * c.work_items for c in cases)
    suite, b = _suite("cuda", quick=False, wave=300_000)
    c = next(iter(suite.cases()))
    assert c.work_items == 4 * 300_000 and c.params["waves"] == 4
    suite, b = _suite("cuda", quick=False, wave=100_000)
    c = next(iter(suite.cases()))
    assert c.work_items == 11 * 100_000 and c.params["waves"] == 11  # 2^20 items round up to 11 waves


def test_check_is_exact_and_catches_unwritten_and_wrong_words() -> None:
    b = _Backend()
    bufs = (b.alloc(4 * 5000), b.alloc(4 * 5000))
    k = IdivKernel("div", "argument", True)
    case = idiv_case(k, 5, 5000, bufs, KernelBuild(("idiv.cpp", k.entry), b))
    ok, msg = case.check()
    assert not ok and "5000 of 5000 words differ" in msg  # nothing written: the poison fails
    ref = k.reference(idiv_input(), 5)
    bufs[1].view("uint32")[:] = np.resize(ref, 5000)
    ok, msg = case.check()
    assert ok, msg
    bufs[1].view("uint32")[4321] ^= 1
    ok, msg = case.check()
    assert not ok and "1 of 5000" in msg and "first at 4321" in msg
    assert check_exact(np.resize(ref, 10), ref)[0]


def test_zero_divisor_refused_before_anything_is_written() -> None:
    b = _Backend()
    bufs = (b.alloc(400), b.alloc(400))
    with pytest.raises(ValueError, match="^idiv: divisor 0 divides by zero$"):
        idiv_case(IdivKernel("mod", "argument", False), 4, 100, bufs, KernelBuild(("idiv.cpp", "x"), b), d=0)
    assert bufs[0].writes == bufs[1].writes == 0 and not b.compiled
    with pytest.raises(ValueError, match="divisor 0"):
        IdivKernel("div", "constant", False).kernel_def(0)


def test_idiv_is_opt_in() -> None:
    assert "idiv" in suite_names() and "idiv" not in default_suites()
    assert set(default_suites()) == set(suite_names()) - {"idiv", "access", "occupancy", "dualissue"}  # all opt-in
    assert parse_suites("idiv") == ("idiv",)
    assert parse_suites("peak,idiv") == ("peak", "idiv")


# ---- the report -------------------------------------------------------------------------------------


def _m(kernel: str, dtype: str, ns_per_op: float, valid: bool = True) -> Measurement:
    items = 1000
    ops = IDIV_F * items
    return Measurement(
        "idiv",
        kernel,
        dtype,
        {"F": IDIV_F, "divisor": 256 if "pow2" in kernel else 255, "n": items},
        ops,
        8 * items,
        (ns_per_op * 1e-9 * ops,) * 3,
        valid,
    )


def _run(measurements: List[Measurement], fp32_gflops: Optional[float], clock_hz: Optional[float] = None) -> Run:
    ceilings = (
        [Ceiling("FP32 vector", "compute", fp32_gflops, "GFLOP/s", "theoretical", "model")] if fp32_gflops else []
    )
    device: Dict[str, Any] = {"backend": "cpu", "name": "test"}
    if clock_hz:
        device["theoretical"] = {"clock_hz": clock_hz}
    return Run(ToolInfo("t", "1", None), "2026-01-02", {}, device, (), tuple(measurements), tuple(ceilings))


def _rows(run: Run) -> Dict[str, List[str]]:
    t = idiv_table(run)
    assert t is not None
    return {f"{r[0]} {r[1]} {r[2]}": list(r) for r in t.rows}


def test_report_section_cycles_and_ratio() -> None:
    ms = [
        _m("div_pow2_literal", "uint32", 0.01),
        _m("div_constant", "uint32", 0.2),
        _m("div_argument", "uint32", 1.8),
        _m("mod_argument", "int32", 2.0),
    ]
    # 64 lanes at 2 GHz: 128 G lane-cycles/s = 256 GFLOP/s FP32
    run = _run(ms, 256.0, 2e9)
    rows = _rows(run)
    arg = rows["div uint32 kernel argument"]
    assert arg[3] == "255" and arg[4] == "1.80" and arg[5] == "230" and arg[6] == "9×" and arg[7] == "yes"
    assert rows["div uint32 specialisation constant"][5] == "25.6"
    assert rows["div uint32 power-of-two literal"][6] == DASH
    assert rows["mod int32 kernel argument"][6] == DASH, "no constant variant measured: no ratio"
    t = idiv_table(run)
    assert t is not None and any("64 lanes at 2.00 GHz" in n for n in t.notes)
    md = to_markdown(run)
    assert re.search(r"^## Integer divide$", md, re.M)
    assert "<h2>Integer divide</h2>" in to_html(run)


def test_report_section_without_a_clock_leaves_cycles_blank() -> None:
    run = _run([_m("div_constant", "int32", 0.2), _m("div_argument", "int32", 1.0, valid=False)], None)
    rows = _rows(run)
    assert rows["div int32 specialisation constant"][5] == DASH
    assert rows["div int32 kernel argument"][6] == DASH and rows["div int32 kernel argument"][7] == "**NO**"
    t = idiv_table(run)
    assert t is not None and any("blank" in n for n in t.notes)


def test_report_section_absent_without_idiv() -> None:
    other = Measurement(
        "peak",
        "vec4_indep8",
        "fp32",
        {"F": 512},
        1000,
        100,
        (1e-3,) * 3,
        True,
        ceiling_class="FP32 vector",
        ceiling_kind="compute",
    )
    run = _run([other], 256.0)
    assert idiv_table(run) is None
    assert "Integer divide" not in to_markdown(run) and "Integer divide" not in to_html(run)
