// The launch path every backend shares (core/backend.h): the default Kernel::launch and
// Kernel::timeline for kernels that have neither, and the native launch loops of the
// dispatch-latency study, timed by the host's steady clock around the public calls.
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.h"
#include "checks.h"
#include "errors.h"

namespace ar {

void Kernel::launch(const std::vector<Arg>&, uint64_t) {
  throw UnsupportedError("[launch] " + entry() + " cannot be launched on its own (only timed)");
}

Timeline Kernel::timeline(const std::vector<Arg>&, uint64_t, uint64_t) {
  throw UnsupportedError("[timeline] the steps of a launch of " + entry() + " cannot be observed on this backend");
}

namespace {

using clk = std::chrono::steady_clock;

void check_counts(uint64_t work_items, uint64_t launches, uint64_t reps) {
  check_work_items(work_items);
  if (launches == 0) throw std::invalid_argument("launches must be at least 1 per sample");
  if (reps == 0) throw std::invalid_argument("reps must be at least 1 sample");
}

}  // namespace

std::vector<double> launch_throughput(Backend& backend, Kernel& kernel, const std::vector<Arg>& args,
                                      uint64_t work_items, uint64_t launches, uint64_t reps) {
  check_counts(work_items, launches, reps);
  backend.synchronize();  // start from an idle device
  std::vector<double> out(reps);
  for (uint64_t r = 0; r < reps; ++r) {
    const clk::time_point t0 = clk::now();
    for (uint64_t i = 0; i < launches; ++i) kernel.launch(args, work_items);
    backend.synchronize();
    out[r] = std::chrono::duration<double>(clk::now() - t0).count();
  }
  return out;
}

std::vector<double> launch_round_trip(Backend& backend, Kernel& kernel, const std::vector<Arg>& args,
                                      uint64_t work_items, uint64_t reps) {
  return launch_throughput(backend, kernel, args, work_items, 1, reps);
}

}  // namespace ar
