// Facts about the host read from the OS, and the measured core clock.
#pragma once

#include <cstdint>
#include <string>

namespace ar::cpu {

std::string cpu_model_name();       // /proc/cpuinfo "model name" or sysctl machdep.cpu.brand_string
uint64_t physical_memory_bytes();   // 0 when unknown
uint64_t last_level_cache_bytes();  // 0 when unknown
// Core clock in Hz, measured by timing a chain of dependent integer adds (one per cycle on every
// x86-64 and arm64 core) over about duration_s seconds; the best of several tries.
double measure_clock_hz(double duration_s);
// The same, run at once on `threads` threads (all cores busy, as in the compute suites, so the
// all-core clock rather than a single-core turbo); returns the median of the threads' clocks.
double measure_clock_hz_all(double duration_s, unsigned threads);

}  // namespace ar::cpu
