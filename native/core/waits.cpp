#include "waits.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "errors.h"

namespace ar {

namespace {
thread_local WaitLimit t_limit;
std::atomic<InterruptHook> g_hook{nullptr};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}
}  // namespace

WaitLimit wait_limit() { return t_limit; }

WaitLimit set_wait_limit(double seconds, std::string pass) {
  WaitLimit previous = t_limit;
  t_limit.seconds = seconds > 0.0 ? seconds : kWaitCapS;
  t_limit.pass = std::move(pass);
  return previous;
}

void set_interrupt_hook(InterruptHook hook) { g_hook.store(hook); }

void check_interrupt() {
  if (InterruptHook hook = g_hook.load()) hook();
}

void run_interruptible(const std::function<void(const std::atomic<bool>& stop)>& body) {
  std::atomic<bool> stop{false};
  std::exception_ptr failed, interrupted;
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  std::thread helper([&] {
    try {
      body(stop);
    } catch (...) {
      failed = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(m);
    finished = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    const auto slice = std::chrono::duration<double>(kInterruptSliceS);
    while (!cv.wait_for(lock, slice, [&] { return finished; })) {
      if (interrupted) continue;  // asked to stop: wait for the body to see it
      lock.unlock();
      try {
        check_interrupt();
      } catch (...) {
        interrupted = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
      }
      lock.lock();
    }
  }
  helper.join();
  if (interrupted) std::rethrow_exception(interrupted);
  if (failed) std::rethrow_exception(failed);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool wait_in_slices(const std::function<bool(double slice_s)>& wait_slice, double limit_s,
                    const std::function<double()>& now) {
  const double deadline = now() + limit_s;
  for (;;) {
    const double left = deadline - now();
    if (left <= 1e-9) return false;  // (a nanosecond: what rounding leaves of a deadline reached)
    if (wait_slice(std::min(kInterruptSliceS, left))) return true;
    check_interrupt();
  }
}

void throw_stopped(const WaitLimit& limit, const std::string& what) {
  const std::string pass = limit.pass.empty() ? what : limit.pass;
  throw DeviceStopped("the device stopped responding: " + pass + " did not finish within " +
                          seconds_text(limit.seconds) + " (still running on the device)",
                      pass, limit.seconds);
}

void Completion::signal() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
}

bool Completion::signalled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

bool Completion::wait_for(double seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; });
}

bool wait_for(Completion& done, double limit_s) {
  if (done.signalled()) return true;
  return wait_in_slices([&](double s) { return done.wait_for(s); }, limit_s);
}

void wait_for(Completion& done, const std::string& what) {
  const WaitLimit limit = t_limit;
  if (!wait_for(done, limit.seconds)) throw_stopped(limit, what);
}

void wait_until(const std::function<bool()>& done, const std::string& what, double spin_s) {
  if (done()) return;  // most waits: nothing to set up
  const WaitLimit limit = t_limit;
  const double start = steady_seconds();
  // One slice: polls until `done`, or until the slice ends.
  auto poll = [&](double slice_s) {
    const double slice_end = steady_seconds() + slice_s;
    for (;;) {
      if (done()) return true;
      const double now = steady_seconds();
      if (now >= slice_end) return false;
      if (now - start < spin_s) {
        std::this_thread::yield();
        continue;
      }
      const double nap = std::clamp((now - start) / 16.0, kPollMinS, kPollMaxS);
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(nap, slice_end - now)));
    }
  };
  if (!wait_in_slices(poll, limit.seconds)) throw_stopped(limit, what);
}

}  // namespace ar
