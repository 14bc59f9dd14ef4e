// The effective SM clock of each timed sample (device.h, ClockSlots and ClockProbe; docs/design.md,
// "Clocks"). The kernels' half is shaders/cuda/clock.cuh; the probe kernel for cuBLAS is the
// backend's own (not a benchmark kernel), so its source lives here, with the same `ar_clock` layout.
#include <cstring>
#include <string>
#include <vector>

#include "core/errors.h"
#include "device.h"

namespace ar::cuda {

namespace {

// clock.cuh's struct ArClock: slot, entry[kClockBlocks][2], sums[kClockSlots][3] (u64 each).
constexpr size_t kSumsOffset = sizeof(uint64_t) * (1 + 2 * kClockBlocks);
constexpr size_t kSumsBytes = sizeof(uint64_t) * 3 * kClockSlots;

// One block, one thread: %clock64 and %globaltimer read together until `ns` nanoseconds of the
// timer have passed, the differences added to the current slot as clock.cuh's probe adds them.
const char* kProbeSource = R"(
struct ArClock {
  unsigned long long slot;
  unsigned long long entry[AR_CLOCK_BLOCKS][2];
  unsigned long long sums[AR_CLOCK_SLOTS][3];
};
__device__ ArClock ar_clock;
extern "C" __global__ void ar_clock_spin(unsigned long long ns) {
  unsigned long long c0, t0, c, t;
  asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(c0), "=l"(t0) :: "memory");
  do {
    asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(c), "=l"(t) :: "memory");
  } while (t - t0 < ns);
  const unsigned long long slot = ar_clock.slot % AR_CLOCK_SLOTS;
  ar_clock.sums[slot][0] += c - c0;
  ar_clock.sums[slot][1] += t - t0;
  ar_clock.sums[slot][2] += 1;
}
)";

// Consecutive samples share a slot when there are more samples than slots.
uint64_t slot_of(uint64_t r, uint64_t reps) { return reps <= kClockSlots ? r : r * kClockSlots / reps; }

}  // namespace

ClockSlots::ClockSlots(CUmodule module, std::string method) : method_(std::move(method)) {
  size_t bytes = 0;
  CUdeviceptr p = 0;
  const CUresult r = driver().cuModuleGetGlobal(&p, &bytes, module, "ar_clock");
  if (r == CUDA_ERROR_NOT_FOUND) return;  // no probe in this kernel
  check(r, "cuModuleGetGlobal");
  if (bytes != kSumsOffset + kSumsBytes)
    throw DeviceError("[cuda::clock] the kernel's ar_clock has " + std::to_string(bytes) + " bytes, not the " +
                      std::to_string(kSumsOffset + kSumsBytes) + " of shaders/cuda/clock.cuh's layout");
  ptr_ = p;
}

void ClockSlots::begin(const Device& dev, uint64_t reps) {
  reps_ = reps;
  if (!ptr_) return;
  check(driver().cuMemsetD8Async(ptr_, 0, kSumsOffset + kSumsBytes, dev.stream()), "cuMemsetD8Async");
}

void ClockSlots::sample(const Device& dev, uint64_t r) {
  if (!ptr_ || (r > 0 && slot_of(r, reps_) == slot_of(r - 1, reps_))) return;
  check(driver().cuMemsetD32Async(ptr_, unsigned(slot_of(r, reps_)), 1, dev.stream()), "cuMemsetD32Async");
}

ClockReading ClockSlots::reading(const Device& dev) const {
  ClockReading out;
  if (!ptr_) {
    out.method = "not measured: the kernel has no clock probe (shaders/cuda/clock.cuh)";
    return out;
  }
  std::vector<uint64_t> sums(3 * kClockSlots);
  check(driver().cuMemcpyDtoHAsync(sums.data(), ptr_ + kSumsOffset, kSumsBytes, dev.stream()), "cuMemcpyDtoHAsync");
  dev.sync("reading the clock probe");
  const uint64_t used = reps_ < kClockSlots ? reps_ : kClockSlots;
  for (uint64_t s = 0; s < used; ++s) {
    const uint64_t cycles = sums[3 * s], ns = sums[3 * s + 1], probes = sums[3 * s + 2];
    if (probes > 0 && ns > 0) out.mhz.push_back(1e3 * double(cycles) / double(ns));
  }
  out.method = method_;
  if (out.mhz.empty()) out.method = "not measured: no probe completed (" + method_ + ")";
  return out;
}

ClockProbe::ClockProbe(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {
  dev_->make_current();
  try {
    CompiledImage img = nvrtc_compile(kProbeSource, "ar_clock_spin",
                                      {"-DAR_CLOCK_BLOCKS=" + std::to_string(kClockBlocks),
                                       "-DAR_CLOCK_SLOTS=" + std::to_string(kClockSlots)},
                                      dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                                      dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    check(driver().cuModuleLoadData(&module_, img.image.data()), "cuModuleLoadData");
    check(driver().cuModuleGetFunction(&function_, module_, "ar_clock_spin"), "cuModuleGetFunction");
    slots_ = ClockSlots(module_, "probe kernel on the same stream before and after each sample (" +
                                     std::to_string(kProbeNs / 1000) +
                                     " us of %clock64 / %globaltimer each): the library's kernels cannot be instrumented");
  } catch (const std::exception& e) {
    reason_ = std::string("not measured: the clock probe kernel could not be built (") + e.what() + ")";
  }
}

ClockProbe::~ClockProbe() {
  if (dev_->abandoned()) return;  // the unload could wait for the work still running
  try {
    dev_->make_current();
    if (module_) driver().cuModuleUnload(module_);
  } catch (...) {
  }
}

void ClockProbe::run() {
  unsigned long long ns = kProbeNs;
  void* params[] = {&ns};
  check(driver().cuLaunchKernel(function_, 1, 1, 1, 1, 1, 1, 0, dev_->stream(), params, nullptr), "cuLaunchKernel");
}

std::shared_ptr<ClockProbe> clock_probe_for(const std::shared_ptr<Device>& dev) {
  std::lock_guard<std::mutex> lock(dev->library_mutex);
  if (!dev->clock_probe) dev->clock_probe = std::make_shared<ClockProbe>(dev);
  return std::static_pointer_cast<ClockProbe>(dev->clock_probe);
}

}  // namespace ar::cuda
