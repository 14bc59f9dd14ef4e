// The worker threads' cycle counters (cycles.h).
#include "cycles.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ar::cpu {

namespace {

#ifdef __linux__
int open_event(uint32_t type, uint64_t config, int group) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = type;
  a.config = config;
  a.exclude_kernel = 1;  // user mode: what perf_event_paranoid <= 2 allows an unprivileged process
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_GROUP;
  return int(syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1 /* any CPU */, group, 0));
}

std::string paranoid() {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  std::string v;
  if (f >> v) return "; /proc/sys/kernel/perf_event_paranoid is " + v;
  return "";
}
#endif

}  // namespace

CycleCounter::CycleCounter() {
#ifdef __linux__
  leader_ = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1);
  if (leader_ < 0) {
    const int e = errno;
    why_ = std::string("perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: ") + std::strerror(e) +
           (e == ENOENT || e == EOPNOTSUPP ? " (no hardware cycle counter here: a VM or container without a PMU)"
            : e == EACCES || e == EPERM    ? " (not permitted)"
                                           : "") +
           paranoid();
    return;
  }
  member_ = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, leader_);
  if (member_ < 0) {
    why_ = std::string("perf_event_open(PERF_COUNT_SW_TASK_CLOCK) failed: ") + std::strerror(errno) + paranoid();
    close(leader_);
    leader_ = -1;
  }
#else
  why_ = "perf_event_open is Linux's; this OS has no per-thread cycle counter the tool reads";
#endif
}

CycleCounter::~CycleCounter() {
#ifdef __linux__
  if (member_ >= 0) close(member_);
  if (leader_ >= 0) close(leader_);
#endif
}

bool CycleCounter::read(uint64_t& cycles, uint64_t& ns) const {
#ifdef __linux__
  if (!ok()) return false;
  uint64_t buf[3] = {0, 0, 0};  // PERF_FORMAT_GROUP: nr, then one value per event in the group
  if (::read(leader_, buf, sizeof buf) != ssize_t(sizeof buf) || buf[0] != 2) return false;
  cycles = buf[1];
  ns = buf[2];
  return true;
#else
  (void)cycles;
  (void)ns;
  return false;
#endif
}

const std::string& CycleCounter::reason() {
  static const std::string why = [] {
    CycleCounter probe;
    return probe.ok() ? std::string() : probe.why_;
  }();
  return why;
}

}  // namespace ar::cpu
