// Host facts used by specs.py: the ISA the CPU kernels were compiled for and the measured clock.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../core/host.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

void init_host(nb::module_& m) {
  m.def(
      "cpu_features", []() { return to_dict(ar::cpu_features()); },
      "The vector ISA the CPU kernels were compiled for (arch, isa, vector_bits, fma,\n"
      "fp16_arithmetic) and the CPUs this process may use (threads).");
  m.def(
      "measure_cpu_clock_hz",
      [](double duration_s, bool all_cores) {
        nb::gil_scoped_release r;
        return ar::measure_cpu_clock_hz(duration_s, all_cores);
      },
      "duration_s"_a = 0.05, "all_cores"_a = true,
      "Core clock in Hz, measured by timing a chain of dependent integer adds (one cycle each on\n"
      "x86-64 and arm64): with all_cores, on one thread per usable CPU at once (the all-core clock,\n"
      "median over threads), else on the calling thread alone (a single-core turbo clock).\n"
      "Raises ValueError for a duration outside (0, 10] s.");
  m.def("cpu_kernels", &ar::cpu_kernel_names, "Entry names of the CPU backend's built-in kernels.");
}

}  // namespace ar::bind
