// Device waits with an end (docs/design.md, "A watchdog on every device wait"): every backend waits
// for its device through wait_until(), which polls instead of blocking, so that
//  * a wait longer than the bound of the calling thread's pass ends in DeviceStopped naming the pass,
//    instead of hanging the process on a device that stopped answering;
//  * a signal received meanwhile is handled within kInterruptSliceS: the interrupt hook (installed
//    by the Python bindings: it takes the GIL and runs Python's signal handlers) is called that
//    often and abandons the wait by throwing whatever the handler raised.
// Plain C++: no vendor and no Python types, so every backend can use it.
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace ar {

// The limit of a device wait on a thread whose pass set none (python/apple_roofline/watchdog.py's
// CAP_S: the longest bound it gives a pass, but for one predicted longer than half of it).
constexpr double kWaitCapS = 60.0;
// How often, in seconds, a wait in progress calls the interrupt hook.
constexpr double kInterruptSliceS = 0.05;
// How long a wait spins (yielding) before it sleeps between polls: short waits, which the dispatch
// studies time from the host, are seen as soon as they end.
constexpr double kSpinS = 0.002;
// The sleep between polls after the spin, seconds.
constexpr double kPollSleepS = 0.0001;

// The limit of the device waits made on the calling thread: `seconds` and the pass they belong to
// ("" when none was named: the wait's own description names it).
struct WaitLimit {
  double seconds = kWaitCapS;
  std::string pass;
};
// The calling thread's limit (kWaitCapS and no pass unless set_wait_limit was called on it).
WaitLimit wait_limit();
// Sets the calling thread's limit; seconds <= 0 means kWaitCapS. Returns the previous one, so a
// caller can restore it.
WaitLimit set_wait_limit(double seconds, std::string pass);

// The hook a wait calls every kInterruptSliceS: it returns to go on waiting, or throws to abandon
// the wait (the exception leaves wait_until unchanged). nullptr (the default): no hook.
using InterruptHook = void (*)();
void set_interrupt_hook(InterruptHook hook);

// Calls the interrupt hook once, if one is installed: returns, or throws what the hook threw (a
// signal's handler raised). For native work that runs long on the calling thread outside a device
// wait: a CPU timing loop checks it between kernel calls.
void check_interrupt();

// Runs `body` on a helper thread while the calling thread waits for it, calling the interrupt hook
// every kInterruptSliceS (a blocking call, such as a host BLAS GEMM, cannot call it itself). When the
// hook throws, `stop` is set for `body` to see between its steps and return early, and once it has
// returned the hook's exception is rethrown; an exception from `body` is rethrown as it is.
void run_interruptible(const std::function<void(const std::atomic<bool>& stop)>& body);

// Polls `done` until it returns true: spinning for kSpinS, then sleeping kPollSleepS between polls,
// calling the interrupt hook every kInterruptSliceS. Throws DeviceStopped (core/errors.h) once the
// calling thread's limit has passed, naming its pass, or `what` (what was waited for, e.g.
// "cuStreamSynchronize after stream_triad_f32") when no pass was named; the work stays on the
// device. Exceptions from `done` and the hook propagate.
void wait_until(const std::function<bool()>& done, const std::string& what);

}  // namespace ar
