// core/host.h over the CPU backend's own facts (host.h, kernels.h, thread_pool.h).
#include "../core/host.h"

#include "host.h"
#include "kernels.h"
#include "thread_pool.h"

namespace ar {

Info cpu_features() {
  Info i;
#if defined(__x86_64__) || defined(_M_X64)
  i["arch"] = std::string("x86_64");
#elif defined(__aarch64__) || defined(_M_ARM64)
  i["arch"] = std::string("arm64");
#else
  i["arch"] = std::string("other");
#endif
  i["isa"] = std::string(cpu::compiled_isa());
  i["vector_bits"] = int64_t(cpu::compiled_vector_bits());
  i["fma"] = cpu::compiled_fma();
  i["fp16_arithmetic"] = cpu::compiled_fp16_arithmetic();
  const int64_t cpus = int64_t(cpu::usable_cpus().size());
  i["threads"] = cpus;  // the CPU backend runs one worker per usable CPU
  i["logical_cpus"] = cpus;
  const char* why = cpu::isa_mismatch();
  i["isa_mismatch"] = std::string(why ? why : "");
  return i;
}

double measure_cpu_clock_hz(double duration_s, bool all_cores) {
  if (all_cores) return cpu::measure_clock_hz_all(duration_s, unsigned(cpu::usable_cpus().size()));
  return cpu::measure_clock_hz(duration_s);
}

std::vector<std::string> cpu_kernel_names() { return cpu::kernel_names(); }

}  // namespace ar
