"""The Metal backend's decisions (native/core/metal_rules.h), which run here through the bindings:
the chunking of counter sample buffers, the GPU tick period, which timer a sample set uses and why,
the error text, and the bookkeeping of launches in flight. On a Mac the backend feeds the same
functions what Metal returned (docs/design/backends.md, "The Metal backend")."""

from __future__ import annotations

import struct
import threading
import time
from typing import Any, List, Sequence, Tuple

import numpy as np
import pytest

_core = pytest.importorskip("apple_roofline._native")._core

from apple_roofline.dispatch.run.runner import DEFAULT_LAUNCHES  # noqa: E402

ERROR = 2**64 - 1  # MTLCounterErrorValue
Clock = Tuple[float, float, int]


def _clocks(span_s: float, ticks: int, half_width_s: float = 1e-6) -> Tuple[Clock, Clock]:
    return (100.0, half_width_s, 5_000_000), (100.0 + span_s, half_width_s, 5_000_000 + ticks)


# ---- chunks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("reps", [1, 2047, 2048, 2049, 4097, 10_000])
def test_sample_buffers_never_exceed_4096_samples(reps: int) -> None:
    chunks = _core.metal_sample_chunks(reps)
    assert _core.METAL_MAX_SAMPLES_PER_BUFFER == 4096
    assert all(1 <= 2 * n <= 4096 for _, n in chunks)
    # contiguous, in order, covering every sample once
    assert [first for first, _ in chunks] == [sum(n for _, n in chunks[:i]) for i in range(len(chunks))]
    assert sum(n for _, n in chunks) == reps


def test_more_than_2048_reps_take_a_second_buffer() -> None:
    assert _core.metal_sample_chunks(2048) == [(0, 2048)]
    assert _core.metal_sample_chunks(2049) == [(0, 2048), (2048, 1)]
    assert _core.metal_sample_chunks(10_000)[-1] == (8192, 1808)
    assert _core.metal_sample_chunks(0) == []


# ---- the tick period --------------------------------------------------------------------------------


def test_a_nanosecond_period_is_snapped_to_exactly_one_ns() -> None:
    """Counters that count nanoseconds, calibrated over 2 ms with 1 us of host uncertainty at each
    end: the calibration reads 1.0005 ns, within its ±0.1 % error, so the period is exactly 1 ns."""
    p = _core.metal_tick_period(*_clocks(2.001e-3, 2_000_000), False)
    assert p["ok"] and p["snapped"] and p["checked"] and p["seconds"] == 1e-9
    assert p["calibrated"] == pytest.approx(1.0005e-9)
    # 2 us of host uncertainty over 2.001 ms (0.09995 %) plus one tick in two million (0.00005 %)
    assert p["error"] == pytest.approx(1.00000025e-3, rel=1e-8)


#: Ticks over 4 ms with 2 us of host uncertainty at each end: the calibration's error is 4 us / 4 ms
#: plus one tick, 0.1000250 %. Each period is 0.975 or 1.025 times that error away from 1 ns:
#: (ticks, calibrated ns per tick, snapped). Worked out by hand, not with the product's formula.
NEAR_THRESHOLD = [
    (3_996_100, 1.000975951553, True),  # 0.0975951553 % slow: 0.975 of the error, snapped
    (3_995_900, 1.001026051703, False),  # 0.1026051703 % slow: 1.025 of the error, kept as calibrated
    (4_003_900, 0.999025949699, True),  # 0.0974050301 % fast: 0.975 of the error, snapped
    (4_004_100, 0.998976049549, False),  # 0.1023950451 % fast: 1.025 of the error, kept as calibrated
]


@pytest.mark.parametrize("ticks, ns, snapped", NEAR_THRESHOLD)
def test_the_1_ns_snap_holds_just_inside_the_calibration_error_and_not_just_outside(
    ticks: int, ns: float, snapped: bool
) -> None:
    """2.5 % of the error either side of the threshold: a tolerance 5 % wider snaps the outside
    periods, one 5 % narrower keeps the inside ones."""
    clocks = _clocks(4e-3, ticks, half_width_s=2e-6)
    p = _core.metal_tick_period(*clocks, False)
    assert p["ok"] and p["checked"] and p["snapped"] is snapped
    assert p["calibrated"] == pytest.approx(ns * 1e-9, rel=1e-10)
    assert p["error"] == pytest.approx(1.000250e-3, rel=1e-6)
    assert p["seconds"] == (1e-9 if snapped else p["calibrated"])
    apple = _core.metal_tick_period(*clocks, True)  # an Apple-family GPU: 1 ns, or no period and why
    assert apple["ok"] is snapped and apple["checked"]
    if snapped:
        assert apple["seconds"] == 1e-9 and apple["problem"] == ""
    else:
        assert apple["problem"] == (
            "this Apple-family GPU's timestamps did not advance at 1 ns per tick "
            f"({ticks} ticks in 4000 us: {ns:.3f} ns per tick, +/- 0.10 %)"
        )


def test_a_period_outside_its_error_of_1_ns_is_kept() -> None:
    """On a GPU outside the Apple families: a 41.67 ns tick, and a period 1 % off 1 ns with a 0.1 %
    calibration error, stay as calibrated."""
    p = _core.metal_tick_period(*_clocks(2e-3, 48_000), False)
    assert p["ok"] and not p["snapped"] and p["seconds"] == p["calibrated"] == pytest.approx(41.6667e-9, rel=1e-4)
    q = _core.metal_tick_period(*_clocks(2.02e-3, 2_000_000), False)
    assert q["ok"] and not q["snapped"] and q["seconds"] == pytest.approx(1.01e-9)


def test_a_half_millisecond_window_on_an_apple_gpu_uses_1_ns() -> None:
    """Apple-family GPUs count nanoseconds: a 0.5 ms window, too short to calibrate, still gives
    exactly 1 ns (unchecked); on another GPU the same window has no period."""
    p = _core.metal_tick_period(*_clocks(0.5e-3, 500_000), True)
    assert p["ok"] and p["snapped"] and not p["checked"] and p["seconds"] == 1e-9 and p["problem"] == ""
    assert not _core.metal_tick_period(*_clocks(0.5e-3, 500_000), False)["ok"]


def test_a_long_window_on_an_apple_gpu_checks_the_1_ns_tick() -> None:
    agrees = _core.metal_tick_period(*_clocks(2.001e-3, 2_000_000), True)
    assert agrees["ok"] and agrees["checked"] and agrees["seconds"] == 1e-9
    # ticks 41.67 ns apart over 2 ms: not nanoseconds, so no period, and why
    off = _core.metal_tick_period(*_clocks(2e-3, 48_000), True)
    assert not off["ok"] and off["problem"].startswith(
        "this Apple-family GPU's timestamps did not advance at 1 ns per tick"
    )
    assert "41.667 ns per tick" in off["problem"]
    stuck = _core.metal_tick_period((1.0, 0.0, 7), (1.1, 0.0, 7), True)
    assert not stuck["ok"] and "0 ticks" in stuck["problem"]


def test_an_uncalibratable_period_says_why() -> None:
    short = _core.metal_tick_period(*_clocks(0.5e-3, 500_000), False)
    assert not short["ok"] and "500 us" in short["problem"] and "1000 us" in short["problem"]
    stuck = _core.metal_tick_period((1.0, 0.0, 7), (1.1, 0.0, 7), False)
    assert not stuck["ok"] and "0 ticks" in stuck["problem"]


# ---- which timer ------------------------------------------------------------------------------------


def _choose(
    cb: Sequence[float],
    ticks: Sequence[int],
    wanted: bool = True,
    unavailable: str = "",
    clocks: Tuple[Clock, Clock] = _clocks(2.001e-3, 2_000_000),
    apple_family: bool = False,
) -> Any:
    return _core.metal_choose_samples(list(cb), wanted, unavailable, list(ticks), *clocks, "vec4_indep4", apple_family)


def _ticks(passes_ns: Sequence[int], start: int = 1_000) -> List[int]:
    out: List[int] = []
    for p in passes_ns:
        out += [start, start + p]
        start += p + 10_000
    return out


def test_valid_counters_time_the_passes_in_nanoseconds() -> None:
    s = _choose([1.00e-3, 1.01e-3], _ticks([990_000, 1_000_000]))
    # ticks × exactly 1e-9: the snapped period scales by nothing else
    assert s["counters"] and s["seconds"] == [990_000 * 1e-9, 1_000_000 * 1e-9]
    assert s["timer"].startswith("counter timestamps") and "tick period 1 ns" in s["timer"]


def test_a_pass_ten_times_shorter_than_its_command_buffer_falls_back() -> None:
    """Timestamps far too short would inflate GB/s and FLOP/s: the whole set falls back to the
    command buffers' times, and the reason is recorded."""
    cb = [2e-3, 2e-3, 2e-3]
    s = _choose(cb, _ticks([1_990_000, 200_000, 1_995_000]))
    assert not s["counters"] and s["seconds"] == cb
    assert s["timer"].startswith("command buffer GPUEndTime - GPUStartTime (counters: 1 of 3 passes")
    assert "under 50 % of their command buffers' time and more than 100 us shorter" in s["timer"]


def test_a_short_command_buffer_is_not_judged_by_the_fraction() -> None:
    """20 us of command buffer around a 2 us pass: the fixed overhead alone may be that large, so the
    pass stands (it is 18 us shorter, under the 100 us the overhead may be)."""
    s = _choose([20e-6], _ticks([2_000]))
    assert s["counters"] and s["seconds"] == [2_000 * 1e-9]


def test_a_pass_longer_than_its_command_buffer_falls_back() -> None:
    s = _choose([1e-3, 1e-3], _ticks([1_000_000, 1_100_000]))
    assert not s["counters"] and "1 of 2 passes timed by the counters were longer" in s["timer"]


@pytest.mark.parametrize("bad", ["zero start", "zero end", "error start", "error end", "end before start"])
def test_a_zero_or_error_sample_falls_back(bad: str) -> None:
    ticks = _ticks([500_000, 500_000])
    if bad == "zero start":
        ticks[2] = 0
    elif bad == "zero end":
        ticks[3] = 0
    elif bad == "error start":
        ticks[2] = ERROR
    elif bad == "error end":
        ticks[3] = ERROR
    else:
        ticks[3] = ticks[2] - 1
    cb = [0.6e-3, 0.6e-3]
    s = _choose(cb, ticks)
    assert not s["counters"] and s["seconds"] == cb
    assert "1 of 2 counter samples were zero, MTLCounterErrorValue or end <= start" in s["timer"]


def test_fallbacks_say_why() -> None:
    cb = [1e-3]
    assert _choose(cb, [], wanted=False) == {
        "seconds": cb,
        "timer": "command buffer GPUEndTime - GPUStartTime",
        "counters": False,
    }
    s = _choose(cb, [], unavailable="this device cannot sample timestamps at stage boundaries")
    assert s["timer"] == (
        "command buffer GPUEndTime - GPUStartTime (counters: this device cannot sample timestamps at stage boundaries)"
    )
    assert "1 timestamps resolved for 1 samples" in _choose(cb, [5])["timer"]
    short = _choose(cb, _ticks([1_000_000]), clocks=_clocks(0.2e-3, 200_000))
    assert not short["counters"] and "could not be calibrated" in short["timer"]


def test_a_short_run_on_an_apple_gpu_keeps_the_counters() -> None:
    """A 0.2 ms window: the counters' passes stand on an Apple-family GPU (1 ns ticks), and the
    timer says the tick was not checked against the host clock."""
    s = _choose([0.1e-3], _ticks([95_000]), clocks=_clocks(0.2e-3, 200_000), apple_family=True)
    assert s["counters"] and s["seconds"] == [95_000 * 1e-9]
    assert "tick period 1 ns, as on every Apple-family GPU; the run was too short to check it" in s["timer"]
    checked = _choose([1.00e-3], _ticks([990_000]), apple_family=True)
    assert checked["counters"] and "the host-clock calibration agreed within its error" in checked["timer"]


def test_a_command_buffer_without_gpu_time_is_an_error() -> None:
    with pytest.raises(_core.DeviceError, match=r"\[metal::GPUEndTime\] vec4_indep4: .*reports no GPU time"):
        _choose([1e-3, 0.0], _ticks([1, 1]))


def test_the_error_text_names_the_call_the_kernel_and_the_status() -> None:
    assert (
        _core.metal_command_buffer_failure(
            "launch", "dispatch_tiny", 5, "Caused GPU Timeout Error (MTLCommandBufferErrorDomain 2)"
        )
        == "[metal::launch] dispatch_tiny: command buffer ended with status Error: Caused GPU Timeout Error "
        "(MTLCommandBufferErrorDomain 2)"
    )
    assert "status unknown (9)" in _core.metal_command_buffer_failure("waitUntilCompleted", "k", 9, "x")


# ---- launches in flight -----------------------------------------------------------------------------


def test_the_queue_holds_the_dispatch_studys_launches() -> None:
    """The default dispatch-study sample (DEFAULT_LAUNCHES launches, then one synchronize) never
    fills the queue, which Metal's default queue (64 command buffers) would."""
    assert _core.METAL_LAUNCHES_IN_FLIGHT >= DEFAULT_LAUNCHES > 64
    assert _core.METAL_QUEUE_DEPTH > _core.METAL_LAUNCHES_IN_FLIGHT


def test_a_full_set_of_slots_makes_the_launcher_wait_until_one_completes() -> None:
    f = _core.MetalInFlight(2)
    f.acquire()
    f.acquire()
    took = threading.Event()

    def third() -> None:
        f.acquire()
        took.set()

    t = threading.Thread(target=third)
    t.start()
    assert not took.wait(0.2) and f.in_flight == 2
    f.complete("")
    assert took.wait(5) and f.in_flight == 2
    t.join()
    f.complete("")
    f.complete("")
    assert f.wait_idle() == "" and f.in_flight == 0


def test_wait_idle_waits_for_every_handler_and_keeps_the_first_error() -> None:
    f = _core.MetalInFlight(8)
    for _ in range(3):
        f.acquire()
    done = []

    def handlers() -> None:
        time.sleep(0.1)
        f.complete("")
        f.complete("[metal::launch] a: first")
        done.append(1)
        f.complete("[metal::launch] b: second")

    t = threading.Thread(target=handlers)
    t.start()
    assert f.wait_idle() == "[metal::launch] a: first" and done == [1]
    t.join()
    assert f.wait_idle() == ""  # taken once
    f.acquire()
    f.abandon()  # a command buffer that was never committed gives its slot back
    assert f.in_flight == 0


# ---- function constants -----------------------------------------------------------------------------

FLOAT, HALF, INT, UINT, SHORT, USHORT, BOOL = 3, 16, 29, 33, 37, 41, 53  # MTLDataType raw values


def test_half_rounding_matches_numpy() -> None:
    """IEEE binary16, round to nearest even, over normals, subnormals, ties, overflow and specials."""
    rng = np.random.default_rng(22)
    values = np.concatenate(
        [
            rng.standard_normal(20_000).astype(np.float32)
            * np.float32(2.0) ** rng.integers(-30, 20, 20_000).astype(np.float32),
            np.array(
                [
                    0.0,
                    -0.0,
                    1.0,
                    65504.0,
                    65519.99,
                    65520.0,
                    1e9,
                    -1e9,
                    2.0**-24,
                    2.0**-25,
                    1.5 * 2.0**-25,
                    2.0**-26,
                    2.0**-14,
                    2.0**-14 - 2.0**-25,
                    np.inf,
                    -np.inf,
                    1.0 + 2.0**-11,
                    1.0 + 3 * 2.0**-11,
                ],
                dtype=np.float32,
            ),
        ]
    ).astype(np.float32)
    with np.errstate(over="ignore"):  # the overflows to infinity are cases
        want = values.astype(np.float16).view(np.uint16)
    got = np.array([_core.metal_half_bits(float(v)) for v in values], dtype=np.uint16)
    assert np.array_equal(got, want), values[got != want][:5]
    nan = _core.metal_half_bits(float("nan"))
    assert nan & 0x7C00 == 0x7C00 and nan & 0x3FF


def test_constant_bytes_follow_the_declared_type() -> None:
    assert _core.metal_constant_bytes(INT, "F", -5) == struct.pack("<i", -5)
    assert _core.metal_constant_bytes(UINT, "F", 4_000_000_000) == struct.pack("<I", 4_000_000_000)
    assert _core.metal_constant_bytes(SHORT, "S", -32768) == struct.pack("<h", -32768)
    assert _core.metal_constant_bytes(USHORT, "S", 65535) == struct.pack("<H", 65535)
    assert _core.metal_constant_bytes(BOOL, "B", 1) == b"\x01"
    assert _core.metal_constant_bytes(FLOAT, "SCALE", 0.1) == struct.pack("<f", 0.1)
    assert _core.metal_constant_bytes(FLOAT, "SCALE", 3) == struct.pack("<f", 3.0)  # an int for a float is fine
    assert _core.metal_constant_bytes(HALF, "H", 1.0) == struct.pack("<e", 1.0)


@pytest.mark.parametrize(
    "type_,value,message",
    [
        (
            INT,
            2**31,
            r"constant X = 2147483648 for kernel 'kernel': out of range for int \(valid: -2147483648 to 2147483647\)",
        ),
        (UINT, -1, r"out of range for uint \(valid: 0 to 4294967295\)"),
        (BOOL, 2, r"out of range for bool \(valid: 0 to 1\)"),
        (INT, 1.5, r"the function declares it int, which needs an integer"),
        (FLOAT, 1e39, r"not finite as a float"),
        (HALF, 70000.0, r"not finite as a half"),
        (45, 1, r"MTLDataType 45 are not supported \(valid: int, uint, short, ushort, bool, float, half\)"),
    ],
)
def test_constant_values_a_type_cannot_hold_are_value_errors(type_: int, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _core.metal_constant_bytes(type_, "X", value)


# ---- which function constants a function is given ----------------------------------------------


def test_only_the_functions_that_declare_a_constant_are_given_it() -> None:
    """The idiv suite's kernel table: every kernel is built with F and DIVISOR, but only the four
    `_constant` kernels read DIVISOR, and Metal lists only the constants a function uses: the others
    are given F alone, DIVISOR skipped, not an error."""
    from apple_roofline.suites.idiv.kernels import IDIV_KERNELS

    source = ["DIVISOR", "F"]
    seen = set()
    for k in IDIV_KERNELS:
        passed = sorted({"F", *k.kernel_def().constants["metal"]})
        declared = ["F", "DIVISOR"] if k.variant == "constant" else ["F"]
        set_, skipped = _core.metal_constant_plan("kernel", k.entry, True, passed, declared, source)
        assert (sorted(set_), skipped) == ((["DIVISOR", "F"], []) if k.variant == "constant" else (["F"], ["DIVISOR"]))
        seen.add(k.variant)
    assert seen == {"pow2_literal", "literal", "constant", "argument"}


def test_a_constant_no_function_declares_is_an_error() -> None:
    with pytest.raises(
        ValueError,
        match=r"kernel function 'idiv_div_u32_literal' declares no function constant 'DIVSOR' "
        r"and no function of its source does \(declared by 'idiv_div_u32_literal': F; "
        r"by the source's functions: DIVISOR, F\)",
    ):
        _core.metal_constant_plan("kernel", "idiv_div_u32_literal", True, ["DIVSOR", "F"], ["F"], ["F", "DIVISOR"])


def test_block_is_the_threadgroup_size_unless_declared() -> None:
    # a compute kernel's BLOCK is its threadgroup size: never a constant it does not declare ...
    assert _core.metal_constant_plan("kernel", "k", True, ["BLOCK", "F"], ["F"], []) == (["F"], [])
    assert _core.metal_constant_plan("kernel", "k", True, ["BLOCK"], ["BLOCK"], ["BLOCK"]) == (["BLOCK"], [])
    # ... and one that declares it must be passed it
    with pytest.raises(ValueError, match="declares the function constant BLOCK: pass it"):
        _core.metal_constant_plan("kernel", "k", True, ["F"], ["F", "BLOCK"], ["F", "BLOCK"])
    # outside compute kernels BLOCK is an ordinary constant
    with pytest.raises(ValueError, match="fragment function 'fs' declares no function constant 'BLOCK'"):
        _core.metal_constant_plan("fragment", "fs", False, ["BLOCK"], [], [])


# ---- MSL versions and Metal 4 tensor ops (issue 47 rows 2 and 7) ------------------------------------


def test_each_source_is_compiled_with_its_own_language_version() -> None:
    from apple_roofline.shaders import shader_source

    assert _core.metal_msl_version(shader_source("matrix_mpp.metal")) == "4.0"
    assert _core.metal_msl_version(shader_source("matrix.metal")) == "3.0"
    assert _core.metal_msl_versions(14) == "3.0"
    assert _core.metal_msl_versions(26) == "3.0; 4.0 for Metal 4 tensor-op kernels"


@pytest.mark.parametrize(
    "os_, bfloat", [((26, 0), False), ((26, 1), True), ((26, 2), True), ((27, 0), True), ((15, 7), False)]
)
def test_bfloat_tensor_ops_are_built_from_macos_26_1(os_: Tuple[int, int], bfloat: bool) -> None:
    assert _core.metal_mpp_bfloat(*os_) is bfloat
    why = _core.metal_mpp_unsupported("mpp_bf16_f32", *os_)
    assert (why == "") is bfloat
    if not bfloat:
        assert why == (
            "matmul2d on bfloat tensors needs macOS 26.1 (MetalPerformancePrimitives before it have no "
            f"bfloat x bfloat); this is {os_[0]}.{os_[1]}"
        )
    for other in ("mpp_f16_f32", "mpp_f16_f16", "mpp_s8_s32"):
        assert _core.metal_mpp_unsupported(other, *os_) == ""
    assert _core.METAL_MPP_BFLOAT_MACRO == "AR_MPP_BFLOAT"  # what matrix_mpp.metal's #if tests


# ---- binary archives (issue 47 rows 4 and 8) --------------------------------------------------------


def test_the_first_archive_is_checked_once_and_a_failed_reload_stops_archiving() -> None:
    """macOS 13 and 14 write archives of specialised functions that never reload: the first one a
    process writes is reloaded; where that fails, nothing more is archived, with one note that counts."""
    p = _core.MetalArchivePolicy()
    assert p.archiving and p.check_next() and not p.check_next()  # once per process
    p.checked(False)
    assert not p.archiving
    p.compiled("stream_copy_f32", "the first archive written did not reload (x)")
    for _ in range(2):
        p.compiled("stream_add_f32", "archiving is off for this process")
    p.compiled("fma_f32", "")
    assert p.summary() == (
        "3 of 4 compute pipelines not archived (first: 'stream_copy_f32': the first archive written did "
        "not reload (x)); they are compiled in every run"
    )


def test_an_archive_that_reloads_keeps_archiving_without_another_check() -> None:
    p = _core.MetalArchivePolicy()
    assert p.check_next()
    p.checked(True)
    assert p.archiving and not p.check_next() and p.summary() == ""
    q = _core.MetalArchivePolicy()
    q.checked(True)  # an archive read from the cache gave its pipeline back: proof enough
    assert q.archiving and not q.check_next()
    q.compiled("a", "")
    q.compiled("b", "serializeToURL: failed (MTLBinaryArchiveDomain 1)")
    assert q.summary().startswith("1 of 2 compute pipelines not archived (first: 'b': serializeToURL")
