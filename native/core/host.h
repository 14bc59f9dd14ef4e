// Host facts the bindings report (plain C++; implemented by the CPU backend, cpu/host_info.cpp).
#pragma once

#include <string>
#include <vector>

#include "backend.h"

namespace ar {

// What the CPU kernels were compiled for and the CPUs this process may use: "arch" ("x86_64",
// "arm64" or "other"), "isa", "vector_bits", "fma", "fp16_arithmetic", "threads" and
// "logical_cpus" (both the usable CPUs: the CPU backend runs one worker on each), "isa_mismatch"
// (empty when the running CPU supports the compiled ISA, else why not).
Info cpu_features();

// Core clock in Hz from a chain of dependent integer adds over about duration_s seconds: with
// all_cores, on one thread per usable CPU at once (the median over threads), else on the calling
// thread alone. std::invalid_argument for a duration outside (0, 10] s.
double measure_cpu_clock_hz(double duration_s, bool all_cores);

// Entry names of the CPU backend's built-in kernels.
std::vector<std::string> cpu_kernel_names();

}  // namespace ar
