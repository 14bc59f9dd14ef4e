// Host facts used by specs.py: the ISA the CPU kernels were compiled for and the measured clock.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../cpu/host.h"
#include "../cpu/kernels.h"
#include "../cpu/thread_pool.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

void init_host(nb::module_& m) {
  m.def(
      "cpu_features",
      []() {
        nb::dict d;
#if defined(__x86_64__) || defined(_M_X64)
        d["arch"] = "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
        d["arch"] = "arm64";
#else
        d["arch"] = "other";
#endif
        d["isa"] = ar::cpu::compiled_isa();
        d["vector_bits"] = ar::cpu::compiled_vector_bits();
        d["fma"] = ar::cpu::compiled_fma();
        d["fp16_arithmetic"] = ar::cpu::compiled_fp16_arithmetic();
        const int cpus = int(ar::cpu::usable_cpus().size());
        d["threads"] = cpus;       // the CPU backend runs one worker per usable CPU
        d["logical_cpus"] = cpus;
        const char* why = ar::cpu::isa_mismatch();
        d["isa_mismatch"] = why ? why : "";
        return d;
      },
      "The vector ISA the CPU kernels were compiled for (arch, isa, vector_bits, fma,\n"
      "fp16_arithmetic) and the CPUs this process may use (threads).");
  m.def(
      "measure_cpu_clock_hz",
      [](double duration_s, bool all_cores) {
        nb::gil_scoped_release r;
        if (all_cores) return ar::cpu::measure_clock_hz_all(duration_s, unsigned(ar::cpu::usable_cpus().size()));
        return ar::cpu::measure_clock_hz(duration_s);
      },
      "duration_s"_a = 0.05, "all_cores"_a = true,
      "Core clock in Hz, measured by timing a chain of dependent integer adds (one cycle each on\n"
      "x86-64 and arm64): with all_cores, on one thread per usable CPU at once (the all-core clock,\n"
      "median over threads), else on the calling thread alone (a single-core turbo clock).\n"
      "Raises ValueError for a duration outside (0, 10] s.");
  m.def("cpu_kernels", &ar::cpu::kernel_names, "Entry names of the CPU backend's built-in kernels.");
}

}  // namespace ar::bind
