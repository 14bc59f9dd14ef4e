"""The native device waits (native/core/waits.h; docs/design/watchdog.md, "A watchdog on every device wait")
on any machine: the waits of the Metal backend's launches in flight (core/metal_rules.cpp, built
everywhere), with a launch that never completes, stand in for a device that stopped responding.

* A wait past the calling thread's bound raises DeviceStopped naming the pass; the limit is the
  thread's own and watched() restores it.
* SIGTERM during a native wait (the GIL released) is handled within the wait's slice: the process
  exits 143 within 2 s.
* A signal that finds the main thread inside a native call that never returns (no handler can run)
  still ends the command: 143 after the watcher's STUCK_S, saying so.
* The wait loop sleeps in slices of at most the interrupt slice, the last one cut to the deadline
  (on a fake clock), and a 200-ms wait of each kind the backends make uses under 10 % of one core.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List, Tuple

import pytest

import apple_roofline
from apple_roofline.cli.signals import STUCK_S
from apple_roofline.errors import DeviceStopped
from apple_roofline.timing import watchdog as W

core = pytest.importorskip("apple_roofline._native")._core
_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(Path(apple_roofline.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
    ),
}
#: Seconds from SIGTERM to the process's end that the exit-code rule allows.
SIGNAL_S = 2.0
#: Seconds any subprocess may take at most.
LIMIT_S = 120


def test_the_python_cap_and_slice_are_the_extensions() -> None:
    assert W.CAP_S == core.WAIT_CAP_S and W.INTERRUPT_SLICE_S == core.WAIT_INTERRUPT_SLICE_S


def test_watched_sets_the_threads_limit_python_and_native_and_restores_it() -> None:
    def both() -> Tuple[Tuple[float, str], Tuple[float, str]]:
        return W.limit(), core.wait_limit()

    assert both() == ((W.CAP_S, ""),) * 2
    seen: List[Tuple[Tuple[float, str], Tuple[float, str]]] = []
    with W.watched("stream triad", 0.5) as bound:
        assert bound == 5.0 and both() == ((5.0, "stream triad"),) * 2
        with W.watched("inner", None):
            assert both() == ((W.CAP_S, "inner"),) * 2
        assert both() == ((5.0, "stream triad"),) * 2
        other = threading.Thread(target=lambda: seen.append(both()))
        other.start()
        other.join()
    assert seen == [((W.CAP_S, ""),) * 2]  # another thread keeps its own
    assert both() == ((W.CAP_S, ""),) * 2
    assert core.set_wait_limit(-1.0, "x") == (W.CAP_S, "")  # none given: the cap
    assert core.set_wait_limit(90.0, "") == (W.CAP_S, "x") and core.wait_limit() == (90.0, "")
    core.set_wait_limit(0.0, "")
    assert core.wait_limit() == (W.CAP_S, "")


def test_a_native_wait_past_its_bound_raises_device_stopped_naming_the_pass() -> None:
    slots = core.MetalInFlight(1)
    slots.acquire()  # a launch that never completes
    began = time.monotonic()
    with W.watched("stream triad", 1e-6):
        with pytest.raises(DeviceStopped) as info:
            slots.wait_idle()
        with pytest.raises(DeviceStopped):
            slots.acquire()  # no free slot either
    assert time.monotonic() - began >= 2 * W.FLOOR_S  # each wait lasted its whole bound
    assert info.value.pass_name == "stream triad" and info.value.bound_s == W.FLOOR_S
    assert str(info.value) == (
        "the device stopped responding: stream triad did not finish within 2 s (still running on the device)"
    )
    assert not isinstance(info.value, core.BackendError)  # no skip-and-go-on path catches it
    slots.complete("")
    assert slots.wait_idle() == ""  # once it completes, the wait returns


def _run_until(script: str, marker: str) -> Tuple[int, float, str]:
    """Run ``script``; SIGTERM once it prints ``marker`` on stdout, then half a second more. Returns
    the exit status, the seconds from the signal to the end, and stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ENV
    )
    killer = threading.Timer(LIMIT_S, proc.kill)
    killer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(marker):
                break
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate()
        return proc.returncode, time.monotonic() - sent, err
    finally:
        killer.cancel()


@pytest.mark.parametrize(
    "wait",
    [
        "slots = _core.MetalInFlight(1); slots.acquire(); wait = slots.wait_idle",  # synchronize's
        'done = _core.DeviceCompletion(); wait = lambda: done.wait("a command buffer")',  # run_samples'
        'done = _core.DeviceCompletion(); wait = lambda: done.poll("a stream")',  # CUDA's stream poll
    ],
    ids=["launches", "completion", "polled"],
)
def test_sigterm_during_a_native_wait_ends_the_process_with_143_within_2_s(wait: str) -> None:
    script = f"""
import sys
from apple_roofline._native import _core
from apple_roofline.cli.signals import interrupted_code, signals_as_interrupts
with signals_as_interrupts():
    {wait}
    print("waiting", flush=True)
    try:
        wait()  # the cap: 60 s
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(interrupted_code())
"""
    rc, took, err = _run_until(script, "waiting")
    assert rc == 128 + signal.SIGTERM, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert took < SIGNAL_S, took


def test_a_signal_that_finds_the_main_thread_stuck_in_native_code_still_ends_the_process() -> None:
    """A call that never returns and never lets a handler run (a mutex locked twice: not
    interruptible by signals): the watcher ends the process with 128 + N after STUCK_S."""
    script = """
import ctypes
from apple_roofline.cli.signals import signals_as_interrupts
libc = ctypes.CDLL(None)
mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER, a normal (non-recursive) mutex
with signals_as_interrupts():
    libc.pthread_mutex_lock(mutex)
    print("stuck", flush=True)
    libc.pthread_mutex_lock(mutex)  # deadlocks, the GIL released
"""
    if not sys.platform.startswith("linux"):
        pytest.skip("the zeroed mutex is glibc's PTHREAD_MUTEX_INITIALIZER")
    rc, took, err = _run_until(script, "stuck")
    assert rc == 128 + signal.SIGTERM, err
    assert "interrupted by SIGTERM while a device call did not return" in err, err
    assert STUCK_S <= took < STUCK_S + SIGNAL_S, took


#: A CPU kernel's timing call made to run far longer than the signal rule allows: one sample of a
#: STREAM copy of 64 MiB repeated ``batch`` times, ``batch`` sized from a first call to last ~30 s.
_LONG_CPU_CALL = """
import sys, time
from apple_roofline._native import _core
from apple_roofline.cli.signals import interrupted_code, signals_as_interrupts
cpu = _core.Backend("cpu", 0)
n = 16 << 20
a, c = cpu.alloc(4 * n), cpu.alloc(4 * n)
{setup}
t0 = time.perf_counter(); k.time(args, work_items, 1, 1, clock=False); one = time.perf_counter() - t0
batch = max(2, int(30.0 / max(one, 1e-6)))
with signals_as_interrupts():
    print("timing", flush=True)
    began = time.perf_counter()
    try:
        k.time(args, work_items, batch, 1, clock=False)
    except KeyboardInterrupt:
        print(f"interrupted after {{time.perf_counter() - began:.2f}} s of {{batch * one:.1f}}", file=sys.stderr)
        sys.exit(interrupted_code())
    print("not interrupted", file=sys.stderr)
"""


@pytest.mark.parametrize(
    "setup",
    [
        # the pool's timing loop
        'k = cpu.compile("kernels.cpp", "stream_copy_f32"); args, work_items = [a, a, c, 1.0], n // 4',
        # BLAS on its calling thread
        'k = cpu.gemm("fp32", 512, 512, 512); args, work_items = [a, a, c], 1',
    ],
    ids=["builtin", "gemm"],
)
def test_sigterm_during_a_long_cpu_timing_call_ends_it_within_2_s(setup: str) -> None:
    """A timing call that would run ~30 s (issue 46: `--sustain 5`, a default CPU run on 2 cores) ends
    at its next kernel call's end once SIGTERM arrives, through the path that writes the partial
    study: KeyboardInterrupt out of the call, exit 143 within 2 s; not the watcher's 'did not return'."""
    rc, took, err = _run_until(_LONG_CPU_CALL.format(setup=setup), "timing")
    assert rc == 128 + signal.SIGTERM, err
    assert "interrupted after" in err and "did not return" not in err and "Traceback" not in err, err
    assert took < SIGNAL_S, (took, err)


# ---- the wait loop: slices, deadline, a fake clock --------------------------------------------------


class _FakeDevice:
    """A device on a fake clock: each slice the wait asks for passes at once, and the work is done once
    the clock reaches ``done_at_s``."""

    def __init__(self, done_at_s: float) -> None:
        self.now = 0.0
        self.done_at_s = done_at_s
        self.slices: List[float] = []

    def wait_slice(self, s: float) -> bool:
        self.slices.append(s)
        self.now += s
        return self.now >= self.done_at_s

    def clock(self) -> float:
        return self.now


def test_the_wait_sleeps_in_slices_of_at_most_the_interrupt_slice_and_stops_at_the_deadline() -> None:
    dev = _FakeDevice(done_at_s=float("inf"))
    assert core.wait_in_slices(dev.wait_slice, 0.12, dev.clock) is False
    assert dev.slices == pytest.approx([0.05, 0.05, 0.02]) and dev.now == pytest.approx(0.12)
    assert max(dev.slices) <= W.INTERRUPT_SLICE_S  # the hook runs at least this often


def test_the_wait_returns_in_the_slice_its_work_ends() -> None:
    dev = _FakeDevice(done_at_s=0.13)
    assert core.wait_in_slices(dev.wait_slice, 10.0, dev.clock) is True
    assert dev.slices == pytest.approx([0.05, 0.05, 0.05])
    dev = _FakeDevice(done_at_s=0.0)  # done at once: one slice
    assert core.wait_in_slices(dev.wait_slice, 10.0, dev.clock) is True and len(dev.slices) == 1


def test_a_completion_wait_past_its_bound_raises_device_stopped_and_one_signalled_returns() -> None:
    pending = core.DeviceCompletion()
    assert pending.wait_within(0.06) is False and not pending.signalled
    with W.watched("stream triad", 1e-6):
        with pytest.raises(DeviceStopped, match="stream triad did not finish within 2 s"):
            pending.wait("a command buffer")
    threading.Timer(0.1, pending.signal).start()
    pending.wait("a command buffer")  # the cap: returns once signalled
    assert pending.signalled and pending.wait_within(0.0) is True


# ---- no wait burns a core ---------------------------------------------------------------------------

#: Each wait the backends make, on a fake device whose work ends 200 ms after the wait begins (a
#: thread signals it, as Metal's completed handler does): the share of one core the whole process
#: used over the wait's wall time (process CPU time, every thread). A fresh interpreter, left to
#: settle first, so that nothing else of a test session's is running.
_CPU_SHARE = """
import threading, time
from apple_roofline._native import _core

def fake(name):  # (the wait, the device's signal that its work ended)
    if name == "launches in flight":
        slots = _core.MetalInFlight(1)
        slots.acquire()
        return slots.wait_idle, lambda: slots.complete("")
    done = _core.DeviceCompletion()
    if name == "polled stream":
        return lambda: done.poll("a stream"), done.signal
    return lambda: done.wait("a command buffer"), done.signal

def share(name):
    wait, signal = fake(name)
    threading.Timer(0.2, signal).start()
    c0, w0 = time.process_time(), time.perf_counter()
    wait()
    return (time.process_time() - c0) / (time.perf_counter() - w0)

time.sleep(1.0)
share("{name}")  # a first wait, unmeasured
print(share("{name}"))
"""


@pytest.mark.parametrize("name", ["command buffer", "polled stream", "launches in flight"])
def test_a_200_ms_wait_costs_under_10_percent_of_one_core(name: str) -> None:
    """Issue 47 row 3: a GPU sample's wait sleeps. The command buffer's wait is run_samples' (the
    completed handler signals, the wait sleeps in slices), the polled stream's CUDA's (cuStreamQuery
    polled, sleeping between polls), the launches' synchronize's wait for the completed handlers."""
    out = subprocess.run(
        [sys.executable, "-c", _CPU_SHARE.format(name=name)],
        capture_output=True,
        text=True,
        env=_ENV,
        timeout=LIMIT_S,
    )
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[-1]) < 0.10, out.stdout
