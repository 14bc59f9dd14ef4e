// Device waits with an end (docs/design/watchdog.md, "A watchdog on every device wait"): every backend waits
// for its device in slices (wait_in_slices: on a Completion its callback signals, or polling a device
// that can only be polled), never in one unbounded blocking call and never on a busy core, so that
//  * a wait longer than the bound of the calling thread's pass ends in DeviceStopped naming the pass,
//    instead of hanging the process on a device that stopped answering;
//  * a signal received meanwhile is handled within kInterruptSliceS: the interrupt hook (installed
//    by the Python bindings: it takes the GIL and runs Python's signal handlers) is called that
//    often and abandons the wait by throwing whatever the handler raised.
// Plain C++: no vendor and no Python types, so every backend can use it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace ar {

// The limit of a device wait on a thread whose pass set none (python/apple_roofline/timing/watchdog.py's
// CAP_S: the longest bound it gives a pass, but for one predicted longer than half of it).
constexpr double kWaitCapS = 60.0;
// How often, in seconds, a wait in progress calls the interrupt hook.
constexpr double kInterruptSliceS = 0.05;
// How long a host-timed wait (the dispatch study's synchronize and timeline: their number is the host's
// clock at the wait's end) spins, yielding, before it sleeps between polls: a short wait is seen as soon
// as it ends. Waits timed by the device's own clock (every GPU sample) never spin.
constexpr double kSpinS = 0.002;
// The sleep between polls: a sixteenth of the time waited so far (the wait's end is seen at most ~6 %
// late), within these bounds, seconds. A 200-ms wait polls about 300 times.
constexpr double kPollMinS = 0.00005;
constexpr double kPollMaxS = 0.001;

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

// Seconds on the steady clock (the waits' clock).
double steady_seconds();

// The loop behind every device wait: calls `wait_slice(s)`, which blocks at most `s` seconds and
// returns true once what is waited for is done, with `s` at most kInterruptSliceS and never reaching
// past `limit_s` after the start (the last slice is cut to the deadline); between slices it calls the
// interrupt hook. Returns true when done, false once `limit_s` passed (the caller says what stopped).
// `now` is the clock (seconds; a test passes a fake one). Exceptions from `wait_slice`, `now` and the
// hook propagate.
bool wait_in_slices(const std::function<bool(double slice_s)>& wait_slice, double limit_s,
                    const std::function<double()>& now = steady_seconds);

// The DeviceStopped (core/errors.h) of a wait past the calling thread's limit, naming its pass, or
// `what` (what was waited for, e.g. "cuStreamSynchronize after stream_triad_f32") when no pass was
// named; the work stays on the device.
[[noreturn]] void throw_stopped(const WaitLimit& limit, const std::string& what);

// A one-shot event that a device's callback signals on its own thread (a Metal completed handler,
// Core ML's completion handler, a helper thread running a blocking call); thread-safe. A waiter
// sleeps on it, using no CPU until it is signalled or its slice ends.
class Completion {
 public:
  void signal();
  bool signalled() const;
  // Blocks until signalled or `seconds` passed; true once signalled.
  bool wait_for(double seconds);

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Waits for `done` in slices (wait_in_slices), within the calling thread's limit: DeviceStopped
// (throw_stopped) once it passed; signals handled meanwhile.
void wait_for(Completion& done, const std::string& what);
// The same within `limit_s` seconds, whatever the thread's limit: false once they passed.
bool wait_for(Completion& done, double limit_s);

// Polls `done` until it returns true, within the calling thread's limit (DeviceStopped once it
// passed, as wait_for), calling the interrupt hook every kInterruptSliceS: yielding between polls for
// the first `spin_s` seconds (kSpinS for a host-timed wait, 0 for any other), then sleeping a
// sixteenth of the time waited so far (kPollMinS to kPollMaxS). For a device that can only be polled
// (a CUDA stream, a Metal command buffer's status). Exceptions from `done` and the hook propagate.
void wait_until(const std::function<bool()>& done, const std::string& what, double spin_s = 0.0);

}  // namespace ar
