#include "waits.h"

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

void wait_until(const std::function<bool()>& done, const std::string& what) {
  if (done()) return;  // most waits: nothing to set up
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const WaitLimit limit = t_limit;
  const auto deadline = start + std::chrono::duration<double>(limit.seconds);
  const auto spin_end = start + std::chrono::duration<double>(kSpinS);
  auto next_check = start + std::chrono::duration<double>(kInterruptSliceS);
  while (!done()) {
    const auto now = clock::now();
    if (now >= deadline) {
      const std::string pass = limit.pass.empty() ? what : limit.pass;
      throw DeviceStopped("the device stopped responding: " + pass + " did not finish within " +
                              seconds_text(limit.seconds) + " (still running on the device)",
                          pass, limit.seconds);
    }
    if (now >= next_check) {
      next_check = now + std::chrono::duration<double>(kInterruptSliceS);
      if (InterruptHook hook = g_hook.load()) hook();
    }
    if (now < spin_end) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::duration<double>(kPollSleepS));
  }
}

}  // namespace ar
