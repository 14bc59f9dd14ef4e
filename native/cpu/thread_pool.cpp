#include "thread_pool.h"

#include <algorithm>
#include <chrono>

#include "../core/waits.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace ar::cpu {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Flush denormals to zero in this thread, as GPUs do in their fast-math modes, so that no kernel
// can fall onto the slow microcoded denormal path (x86 MXCSR FTZ|DAZ; arm64 FPCR.FZ and FZ16).
void flush_denormals() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_setcsr(_mm_getcsr() | 0x8040u);
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  fpcr |= (1ull << 24) | (1ull << 19);
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
}
}  // namespace

std::vector<int> usable_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
  if (cpus.empty()) {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned c = 0; c < n; ++c) cpus.push_back(-1);  // -1: not pinned
  }
  return cpus;
}

ThreadPool::ThreadPool(unsigned workers) {
  std::vector<int> cpus = usable_cpus();
  workers = std::max(1u, workers);
  threads_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) {
    int cpu = i < cpus.size() ? cpus[i] : -1;
    threads_.emplace_back([this, i, cpu] { worker_main(i, cpu); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void ThreadPool::worker_main(unsigned index, int cpu) {
#if defined(__linux__)
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort
  }
#else
  (void)cpu;
#endif
  flush_denormals();
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(unsigned)>* job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    try {
      (*job)(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
}

void ThreadPool::run(const std::function<void(unsigned)>& fn) {
  std::lock_guard<std::mutex> one_job(run_mutex_);
  std::unique_lock<std::mutex> lock(mutex_);
  job_ = &fn;
  error_ = nullptr;
  pending_ = size();
  arrived_.store(0, std::memory_order_relaxed);
  interrupted_.store(false, std::memory_order_relaxed);
  ++generation_;
  wake_.notify_all();
  std::exception_ptr interruption;
  const auto slice = std::chrono::duration<double>(kInterruptSliceS);
  while (!done_cv_.wait_for(lock, slice, [&] { return pending_ == 0; })) {
    if (interruption) continue;  // the workers leave at their next barrier_stop()
    lock.unlock();
    try {
      check_interrupt();
    } catch (...) {
      interruption = std::current_exception();
      interrupted_.store(true, std::memory_order_release);
    }
    lock.lock();
  }
  job_ = nullptr;
  if (interruption) {
    error_ = nullptr;
    std::rethrow_exception(interruption);
  }
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::barrier() {
  const uint32_t my_sense = sense_.load(std::memory_order_relaxed);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size()) {
    arrived_.store(0, std::memory_order_relaxed);
    sense_.store(my_sense + 1, std::memory_order_release);
    return;
  }
  unsigned spins = 0;
  while (sense_.load(std::memory_order_acquire) == my_sense) {
    if (++spins < 4096) cpu_relax();
    else std::this_thread::yield();
  }
}

bool ThreadPool::barrier_stop() {
  const uint32_t my_sense = sense_.load(std::memory_order_relaxed);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size()) {
    const bool stop = interrupted_.load(std::memory_order_acquire);
    stop_seen_.store(stop, std::memory_order_relaxed);  // published by the release of sense_ below
    arrived_.store(0, std::memory_order_relaxed);
    sense_.store(my_sense + 1, std::memory_order_release);
    return stop;
  }
  unsigned spins = 0;
  while (sense_.load(std::memory_order_acquire) == my_sense) {
    if (++spins < 4096) cpu_relax();
    else std::this_thread::yield();
  }
  // no later barrier can overwrite it before this read: its last arrival needs this worker too
  return stop_seen_.load(std::memory_order_relaxed);
}

std::pair<uint64_t, uint64_t> ThreadPool::share(unsigned w, uint64_t total, uint64_t grain) const {
  const uint64_t units = (total + grain - 1) / grain;
  const uint64_t per = (units + size() - 1) / size();
  const uint64_t b = std::min(total, uint64_t(w) * per * grain);
  const uint64_t e = std::min(total, uint64_t(w + 1) * per * grain);
  return {b, e};
}

}  // namespace ar::cpu
