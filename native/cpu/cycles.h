// Core cycles of a worker thread over the timed samples, for its effective clock (docs/design/clocks.md,
// "Clocks"): Linux's perf_event_open, the hardware cycle counter (PERF_COUNT_HW_CPU_CYCLES, user
// mode) grouped with the thread's time on the CPU (PERF_COUNT_SW_TASK_CLOCK, ns), read together, so
// cycles / ns is the clock the thread ran at while it ran (what `perf stat` prints as GHz). Where the
// OS refuses (no counters in a VM or container, perf_event_paranoid, not Linux) cycle_counter_reason()
// says why, once per process, and nothing is counted.
#pragma once

#include <cstdint>
#include <string>

namespace ar::cpu {

class CycleCounter {
 public:
  CycleCounter();  // counts the calling thread; ok() false where the OS refuses
  ~CycleCounter();
  CycleCounter(const CycleCounter&) = delete;
  CycleCounter& operator=(const CycleCounter&) = delete;
  bool ok() const { return leader_ >= 0 && member_ >= 0; }
  // Cycles and task-clock ns so far; false when the read fails.
  bool read(uint64_t& cycles, uint64_t& ns) const;
  // Why the counters cannot be opened ("" where they can), checked once per process.
  static const std::string& reason();

 private:
  int leader_ = -1, member_ = -1;
  std::string why_;
};

}  // namespace ar::cpu
