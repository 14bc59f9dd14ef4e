// A persistent pool of worker threads, one per usable CPU, pinned where the OS allows (Linux).
// run(fn) wakes every worker, calls fn(worker_index) on each and returns when all have finished;
// the calling thread only waits (it is never pinned, so Python's main thread keeps its affinity).
// Inside fn, barrier() synchronises all workers: a sense-reversing spin barrier that yields after a
// short spin, so an oversubscribed machine still makes progress.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ar::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(threads_.size()); }
  // Runs fn on every worker; rethrows the first exception a worker raised. Calls from several
  // threads are serialised (Python threads time kernels with the GIL released); not re-entrant
  // from inside fn. While the workers run, the calling thread calls the interrupt hook
  // (core/waits.h) every kInterruptSliceS: when it throws (a signal's handler raised), fn's
  // barrier_stop() answers true from then on, and once every worker has returned the hook's
  // exception is rethrown, so a signal ends a long job at its next barrier_stop().
  void run(const std::function<void(unsigned)>& fn);
  // All workers wait here until every worker has arrived. Only valid inside run().
  void barrier();
  // barrier(), telling every worker the same answer: whether the caller of run() was interrupted,
  // so that all of them leave fn at this point together (no worker is left waiting at a barrier).
  bool barrier_stop();
  // Splits [0, total) into size() contiguous chunks of whole `grain` units; worker w's share.
  std::pair<uint64_t, uint64_t> share(unsigned w, uint64_t total, uint64_t grain = 1) const;

 private:
  void worker_main(unsigned index, int cpu);

  std::vector<std::thread> threads_;
  std::mutex run_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<bool> interrupted_{false};  // set by run() when the interrupt hook threw
  // barrier state
  std::atomic<bool> stop_seen_{false};  // interrupted_ as the last arrival of a barrier_stop() read it
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<uint32_t> sense_{0};
};

// CPUs this process may run on (sched_getaffinity on Linux, hardware_concurrency elsewhere).
std::vector<int> usable_cpus();

}  // namespace ar::cpu
