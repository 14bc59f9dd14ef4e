"""The optimization guide's rules (access, occupancy, dualissue): the kernels' index maps, references
and counting, the suites' planning limits, the report tables, the figures and the files a run writes
with them. No native code: the kernels themselves run in tests/backend/test_rules_kernels.py and
tests/toolchain."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.options import parse_suites
from apple_roofline.roofline.views.html import to_html
from apple_roofline.roofline.views.outputs import write_run_files
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.records import Measurement
from apple_roofline.suites.access.kernels import (
    ACCESS_KERNELS,
    check_access,
    check_stride,
    expected_words,
    strided_index,
)
from apple_roofline.suites.access.plot import plot_access
from apple_roofline.suites.access.suite import last_level_bytes, level_bytes
from apple_roofline.suites.access.table import access_rules, access_table
from apple_roofline.suites.dualissue.kernels import DUAL_BY_NAME, DUAL_KERNELS, int_reference, kind_reference
from apple_roofline.suites.dualissue.plot import plot_dualissue
from apple_roofline.suites.dualissue.table import dual_verdict, dualissue_table
from apple_roofline.suites.occupancy.plot import plot_occupancy
from apple_roofline.suites.occupancy.suite import occupancy_reference, occupancy_source, tg_limit, tg_sizes
from apple_roofline.suites.occupancy.table import guide_row, occupancy_table
from apple_roofline.suites.registry import default_suites, suite_names
from apple_roofline.theoretical.caches import SHARED_LEVEL, cache_levels
from fill32 import WriteFill32  # tests/, on the path (conftest)

# ---- access ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 16, 32, 64])
def test_strided_index_reads_every_element_once_stride_apart(stride: int) -> None:
    n = 64
    j = strided_index(np.arange(n, dtype=np.uint64), n, stride)
    assert sorted(j.tolist()) == list(range(n)), "every element exactly once"
    m = n // stride
    for i in range(n - 1):
        if (i + 1) % m:  # within a run of i div M: neighbours S apart
            assert int(j[i + 1]) - int(j[i]) == stride


@pytest.mark.parametrize("bad", [0, 3, 6, 128, -2, 2.0, True])
def test_stride_outside_the_range_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="power of two from 1 to 64"):
        check_stride(bad, 64)
    with pytest.raises(ValueError, match="not a power of two"):
        check_stride(1, 48)


def test_access_check_is_exact() -> None:
    n, width, stride = 32, 4, 8
    good = expected_words(0, n * width, n, width, stride)
    assert check_access(good, n, width, stride)[0]
    assert not check_access(np.arange(n * width, dtype=np.uint32), n, width, stride)[0], "stride 1 is not stride 8"
    bad = good.copy()
    bad[17] ^= 1
    ok, msg = check_access(bad, n, width, stride)
    assert not ok and "1 of 128 words" in msg and "first at word 17" in msg


def test_access_counts_and_levels() -> None:
    assert [k.bytes_per_item() for k in ACCESS_KERNELS] == [8, 16, 32]
    assert [k.entry for k in ACCESS_KERNELS] == ["access_u32", "access_u32x2", "access_u32x4"]
    assert level_bytes("dram", 300 << 20, {}) == 256 << 20
    assert level_bytes("cache", 0, {"llc_bytes": 50 << 20}) == 8 << 20  # a quarter, down to a power of two
    assert level_bytes("cache", 0, {}) == 0
    # no reported size: the largest documented level (a WebGPU adapter of an Apple chip: its SLC)
    apple = {"backend": "wgpu", "name": "Apple M1 Max", "limits": {"max-compute-workgroup-storage-size": 32768}}
    slc = max(lv.capacity for lv in cache_levels(apple)[0] if lv.name != SHARED_LEVEL)
    assert last_level_bytes(apple) == slc and level_bytes("cache", 0, apple) == 1 << (slc // 4).bit_length() - 1
    assert last_level_bytes({"backend": "wgpu", "name": "AMD Radeon 780M"}) == 0  # nothing documented


# ---- dual issue ------------------------------------------------------------------------------------


def test_dual_counts_are_equal_between_mixed_and_alone() -> None:
    F = 512
    for a, b in (("fp32", "fp16"), ("fp32", "int32")):
        mix = DUAL_BY_NAME[f"{a}_{b}"].counts(F)
        alone = {k: DUAL_BY_NAME[a].counts(F)[k] + DUAL_BY_NAME[b].counts(F)[k] for k in mix}
        assert mix == alone
    assert DUAL_BY_NAME["fp32"].flops_per_item(F) == 2 * 8 * F
    assert DUAL_BY_NAME["int32"].flops_per_item(F) == 8 * F  # integer ops where there are no FLOPs
    assert DUAL_BY_NAME["fp32_int32"].flops_per_item(F) == 2 * 8 * F
    assert [k.bytes_per_item() for k in DUAL_KERNELS] == [64, 64, 64, 96, 96]


def test_int_reference_is_a_fibonacci_chain_that_depends_on_F() -> None:
    x = np.array([0.25, -0.5], np.float32)
    u = int(x.view(np.uint32)[0])
    v = u ^ 0x9E3779B9
    for _ in range(3):
        u = (u + v) % 2**32
        v = (v + u) % 2**32
    assert int(int_reference(x, 6)[0]) == u ^ v
    assert not np.array_equal(int_reference(x, 512), int_reference(x, 510))


def test_fp_references_depend_on_F() -> None:
    """FP32 depends on every step; FP16 reaches a rounding fixed point within a few hundred steps
    (as the peak suite's FP16 chains), so only short chains tell its step counts apart."""
    x = np.linspace(-0.5, 0.5, 64, dtype=np.float32)
    assert not np.array_equal(kind_reference("fp32", x, 512), kind_reference("fp32", x, 510))
    assert not np.array_equal(kind_reference("fp16", x, 8), kind_reference("fp16", x, 2))


# ---- occupancy -------------------------------------------------------------------------------------


def test_tg_sizes_stop_at_the_device_limit() -> None:
    assert tg_sizes(32 << 10) == [0, 4 << 10, 8 << 10, 12 << 10, 16 << 10, 24 << 10, 32 << 10]
    assert max(tg_sizes(48 << 10)) == 48 << 10
    assert tg_limit({"shared_memory_per_block_bytes": 49152}) == 49152
    assert tg_limit({"max_threadgroup_memory_bytes": 32768}) == 32768
    assert tg_limit({}) == 0


def test_occupancy_source_and_reference() -> None:
    assert occupancy_source("body", 8192, 256).startswith("#define AR_TG_FLOAT4S 512\n#define AR_TG_SPREAD 2\n")
    with pytest.raises(ValueError, match="multiple of 4096"):
        occupancy_source("body", 1000, 256)
    x = np.arange(16, dtype=np.float32)
    assert occupancy_reference(x).tolist() == [4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11]


def test_rules_suites_are_opt_in() -> None:
    for name in ("access", "occupancy", "dualissue"):
        assert name in suite_names() and name not in default_suites()
    assert parse_suites("access,dualissue") == ("access", "dualissue")


# ---- the report ------------------------------------------------------------------------------------


def _m(
    suite: str, kernel: str, dtype: str, params: Dict[str, Any], flops: int, nbytes: int, t: float, valid: bool = True
) -> Measurement:
    return Measurement(suite, kernel, dtype, params, flops, nbytes, (t,) * 3, valid)


def _run(ms: List[Measurement]) -> Run:
    return Run(ToolInfo("t", "1", None), "2026-01-02", {}, {"backend": "cuda", "name": "test GPU"}, (), tuple(ms), ())


def _access_run() -> Run:
    ms = []
    for level, base in (("dram", 1e-3), ("cache", 2e-4)):
        for kernel, width, speed in (("scalar", 1, 1.0), ("vec4", 4, 1.9)):
            for stride in (1, 2, 32):
                n = 1 << 20
                ms.append(
                    _m(
                        "access",
                        kernel,
                        "uint32",
                        {"level": level, "stride": stride, "width": width, "n": n // width, "array_bytes": 4 * n},
                        0,
                        8 * n,
                        base * stride / speed,
                    )
                )
    return _run(ms)


def test_access_table_states_each_rule_as_a_ratio() -> None:
    run = _access_run()
    t = access_table(run)
    assert t is not None
    rules = access_rules(run)
    assert any(
        r.startswith("dram") and "vec4 loads 1.90× scalar" in r and "stride 32 reaches 0.0312×" in r for r in rules
    ), rules
    row = next(r for r in t.rows if r[0] == "cache" and r[2] == "vec4" and r[3] == "1")
    assert row[5] == "1.9×"
    md = to_markdown(run)
    assert re.search(r"^## Access patterns$", md, re.M) and "<h2>Access patterns</h2>" in to_html(run)


def test_occupancy_table_beside_the_guide() -> None:
    ms = [
        _m(
            "occupancy",
            "occupancy_copy",
            "fp32",
            {"threadgroup_bytes": tg, "block": 256, "resident_blocks_per_sm": blocks},
            0,
            32 << 20,
            t,
        )
        for tg, blocks, t in ((0, 8, 1e-3), (4096, 8, 1e-3), (16384, 3, 1.5e-3), (49152, 1, 4e-3))
    ]
    t = occupancy_table(_run(ms))
    assert t is not None
    assert [r[0] for r in t.rows] == ["0", "4", "16", "48"]
    assert t.rows[1][1].startswith("high") and t.rows[2][1] == "reduced"
    assert t.rows[2][2] == "3" and t.rows[2][5] == "0.667×"
    assert t.rows[3][1].startswith("beyond")
    assert guide_row(8192) == "moderate" and guide_row(32768) == "1 threadgroup per core"
    assert guide_row(12 << 10) == "between moderate (8 KB) and reduced (16 KB)"


def _dual_run(mixed_s: float, valid: bool = True) -> Run:
    """Times per 1000 work items; the mixed kernels' launches hold 750 (fewer resident blocks), so
    their times per launch are scaled and the table must compare per work item."""
    times = {"fp32": 1e-3, "fp16": 1e-3, "int32": 0.5e-3, "fp32_fp16": mixed_s, "fp32_int32": mixed_s}
    ms = []
    for dk in DUAL_KERNELS:
        c = {k: v for k, v in dk.counts(512).items() if v}
        n = 750 if dk.mixed else 1000
        ms.append(
            _m(
                "dualissue",
                dk.name,
                dk.dtype,
                {"F": 512, "n": n, **c},
                dk.flops_per_item(512) * n,
                dk.bytes_per_item() * n,
                times[dk.name] * n / 1000,
                valid or dk.mixed is False,
            )
        )
    return _run(ms)


def test_dualissue_verdicts() -> None:
    together = dualissue_table(_dual_run(1.05e-3))
    assert together is not None and [r[-1] for r in together.rows] == ["issued together"] * 2
    serial = dualissue_table(_dual_run(2.0e-3))
    assert serial is not None and serial.rows[0][-1] == "one at a time" and serial.rows[0][4] == "1"
    assert dual_verdict(1.4, 0.7) == "partly overlapped"
    missing = dualissue_table(_dual_run(1e-3, valid=False))
    assert missing is not None and missing.rows == (), "no ratio is formed with an invalid mixed kernel"


def test_figures_and_files(tmp_path: Path) -> None:
    run = _run(
        [
            *_access_run().measurements,
            *_dual_run(1.5e-3).measurements,
            _m("occupancy", "occupancy_copy", "fp32", {"threadgroup_bytes": 0, "block": 256}, 0, 1 << 20, 1e-3),
        ]
    )
    for fig in (plot_access(run), plot_occupancy(run), plot_dualissue(run)):
        assert fig is not None
    written, _problems = write_run_files(run, tmp_path)
    names = {p.name for p in written}
    assert {f"{n}.{e}" for n in ("access", "occupancy", "dualissue") for e in ("png", "svg")} <= names
    assert 'id="m-0"' in (tmp_path / "report.html").read_text(), "hover ids on the access markers"
    empty = _run([])
    assert plot_access(empty) is None and plot_occupancy(empty) is None and plot_dualissue(empty) is None
    assert access_table(empty) is None and occupancy_table(empty) is None and dualissue_table(empty) is None


# ---- the kept H100 run (tests/unit/data/run_h100_rules.json, 2026-11-26) ----------------------------


def test_the_kept_h100_run_reads_back_into_every_section() -> None:
    """The three suites as an H100 ran them: every measurement valid, each section and figure built
    from the file; the rules' sentences name both levels."""
    from apple_roofline.results import load_results

    run = load_results(Path(__file__).parent / "data" / "run_h100_rules.json")
    assert isinstance(run, Run) and run.device_name.startswith("NVIDIA H100")
    assert run.measurements and all(m.valid for m in run.measurements)
    assert {m.suite for m in run.measurements} == {"access", "occupancy", "dualissue"}
    rules = access_rules(run)
    assert [r.split(" ")[0] for r in rules] == ["dram", "cache"]
    occ = occupancy_table(run)
    assert occ is not None and [r[0] for r in occ.rows][-1] == "48"
    assert all(r[2].isdigit() for r in occ.rows), "the occupancy calculator's resident blocks on every CUDA row"
    dual = dualissue_table(run)
    assert dual is not None and len(dual.rows) == 2
    for draw in (plot_access, plot_occupancy, plot_dualissue):
        assert draw(run) is not None


# ---- planning on a fake device (no native code) ----------------------------------------------------


class _Buf(WriteFill32):
    def __init__(self, nbytes: int) -> None:
        self.mem = np.zeros(nbytes, np.uint8)

    def write(self, a: np.ndarray, offset: int) -> None:
        raw = np.ascontiguousarray(a).view(np.uint8)
        self.mem[offset : offset + raw.size] = raw

    def view(self, dtype: str) -> np.ndarray:
        return self.mem.view(dtype)


class _Kernel:
    wave_items = 0
    max_block = 1024


class _Backend:
    def __init__(self) -> None:
        self.compiled: List[Any] = []

    def alloc(self, nbytes: int) -> _Buf:
        return _Buf(nbytes)

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> _Kernel:
        self.compiled.append((source, entry, dict(constants)))
        return _Kernel()


def test_access_without_a_cache_size_skips_the_cache_level() -> None:
    from apple_roofline.suites.access.suite import NO_CACHE_REASON, AccessSuite
    from apple_roofline.suites.base import SuiteContext

    suite = AccessSuite(SuiteContext(_Backend(), "metal", {}, True, 1 << 16))
    cases = list(suite.cases())
    measured = [c for c in cases if c.params.get("level") == "dram"]
    skipped = [c for c in cases if c.params.get("level") == "cache"]
    assert len(measured) == 3 * 3 and {c.params["array_bytes"] for c in measured} == {1 << 16}
    assert len(skipped) == 3 and all(c.check() == (False, NO_CACHE_REASON) for c in skipped)


def test_occupancy_plans_every_size_to_the_metal_limit() -> None:
    from apple_roofline.suites.base import SuiteContext
    from apple_roofline.suites.occupancy.suite import REGISTERS_REASON, OccupancySuite

    backend = _Backend()
    info = {"max_threadgroup_memory_bytes": 32768}
    cases = list(OccupancySuite(SuiteContext(backend, "metal", info, True, 1 << 20)).cases())
    assert cases[0].kernel.name == "registers" and cases[0].check() == (False, REGISTERS_REASON)
    sizes = [c.params["threadgroup_bytes"] for c in cases[1:]]
    assert sizes == [0, 4096, 8192, 12288, 16384, 24576, 32768]
    for case in cases[1:]:
        case.make_kernel()
        assert case.params["max_threads_per_threadgroup"] == 1024
        assert "resident_blocks_per_sm" not in case.params, "Metal reports no resident count"
        assert case.bytes == 32 * case.work_items and case.work_items % 512 == 0
    f4 = [int(re.match(r"#define AR_TG_FLOAT4S (\d+)", src).group(1)) for src, _e, _c in backend.compiled]  # type: ignore[union-attr]
    assert f4 == [s // 16 for s in sizes]
