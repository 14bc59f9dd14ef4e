// The effective SM clock of each timed sample (device.h, ClockSlots and ClockProbe; docs/design/clocks.md,
// "Clocks"). The kernels' half is shaders/cuda/clock.cuh; the probe kernel for cuBLAS is the
// backend's own (not a benchmark kernel), so its source lives here, with the same `ar_clock` layout.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/errors.h"
#include "device.h"

namespace ar::cuda {

namespace {

// clock.cuh's struct ArClock: slot, then first[kClockSlots][kClockSms][2], then last[...][2] (u64 each).
constexpr size_t kFirstOffset = sizeof(uint64_t);
constexpr size_t kWindowBytes = sizeof(uint64_t) * 2 * kClockSlots * kClockSms;
constexpr size_t kLastOffset = kFirstOffset + kWindowBytes;

// One block, one thread: %clock64 and %globaltimer read together until `ns` nanoseconds of the
// timer have passed, its SM's window kept in the current slot as clock.cuh's probe keeps it.
const char* kProbeSource = R"(
struct ArClock {
  unsigned long long slot;
  unsigned long long first[AR_CLOCK_SLOTS][AR_CLOCK_SMS][2];
  unsigned long long last[AR_CLOCK_SLOTS][AR_CLOCK_SMS][2];
};
__device__ ArClock ar_clock;
extern "C" __global__ void ar_clock_spin(unsigned long long ns) {
  unsigned sm;
  unsigned long long c0, t0, c, t;
  asm volatile("mov.u32 %0, %%smid;\n\tmov.u64 %1, %%clock64;\n\tmov.u64 %2, %%globaltimer;"
               : "=r"(sm), "=l"(c0), "=l"(t0) :: "memory");
  do {
    asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(c), "=l"(t) :: "memory");
  } while (t - t0 < ns);
  if (sm >= AR_CLOCK_SMS) return;
  const unsigned long long slot = ar_clock.slot % AR_CLOCK_SLOTS;
  atomicMin(&ar_clock.first[slot][sm][0], c0);
  atomicMin(&ar_clock.first[slot][sm][1], t0);
  atomicMax(&ar_clock.last[slot][sm][0], c);
  atomicMax(&ar_clock.last[slot][sm][1], t);
}
)";

}  // namespace

unsigned probes_per_sample(double launch_s) {
  if (!(launch_s > 0)) return 1;
  const double n = std::ceil(kClockWindowS / launch_s);
  return n >= kClockMaxPerSample ? kClockMaxPerSample : n < 1 ? 1u : unsigned(n);
}

ClockSlots::ClockSlots(CUmodule module, std::string method) : method_(std::move(method)) {
  size_t bytes = 0;
  CUdeviceptr p = 0;
  const CUresult r = driver().cuModuleGetGlobal(&p, &bytes, module, "ar_clock");
  if (r == CUDA_ERROR_NOT_FOUND) return;  // no probe in this kernel
  check(r, "cuModuleGetGlobal");
  if (bytes != kLastOffset + kWindowBytes)
    throw DeviceError("[cuda::clock] the kernel's ar_clock has " + std::to_string(bytes) + " bytes, not the " +
                      std::to_string(kLastOffset + kWindowBytes) + " of shaders/cuda/clock.cuh's layout");
  ptr_ = p;
}

uint64_t probed_samples(uint64_t reps, uint64_t batch, unsigned per_sample) {
  const unsigned each = per_sample < 1 ? 1 : per_sample;
  const uint64_t share = uint64_t(kProbeShare * double(reps) * double(batch) / double(each));
  const uint64_t least = reps < kMinProbedSamples ? reps : kMinProbedSamples;
  const uint64_t slots = kClockSlots / each;
  const uint64_t n = share > least ? share : least;
  return std::min(std::min(n, reps), slots);
}

void ClockSlots::begin(const Device& dev, uint64_t reps, unsigned per_sample, uint64_t most) {
  reps_ = reps;
  per_sample_ = per_sample < 1 ? 1 : per_sample > kClockSlots ? kClockSlots : per_sample;
  groups_ = std::min({reps, uint64_t(kClockSlots / per_sample_), most});
  // A call that probes nothing (Kernel::time with clock false: most 0) resets nothing: the windows
  // are 2 x 256 KiB of memsets on the stream, before every warm-up launch otherwise.
  if (!ptr_ || groups_ == 0) return;
  // first: all ones (atomicMin's identity), last: zeros (atomicMax's); both on the stream.
  CU_CHECK(driver().cuMemsetD8Async(ptr_ + kFirstOffset, 0xff, kWindowBytes, dev.stream()));
  CU_CHECK(driver().cuMemsetD8Async(ptr_ + kLastOffset, 0, kWindowBytes, dev.stream()));
}

// Sample r belongs to group r·groups/reps; the first sample of each group is probed.
bool ClockSlots::probed(uint64_t r) const {
  if (!ptr_ || groups_ == 0 || r >= reps_) return false;
  return r == 0 || (r * groups_) / reps_ != ((r - 1) * groups_) / reps_;
}

unsigned ClockSlots::slot(uint64_t r, unsigned j) const {
  return unsigned(((r * groups_) / reps_) * per_sample_ + j) % kClockSlots;
}

void ClockSlots::point(const Device& dev, unsigned slot) const {
  CU_CHECK(driver().cuMemsetD32Async(ptr_, slot, 1, dev.stream()));
}

ClockReading ClockSlots::reading(const Device& dev) const {
  ClockReading out;
  if (!ptr_) {
    out.method = "not measured: the kernel has no clock probe (shaders/cuda/clock.cuh)";
    return out;
  }
  std::vector<uint64_t> first(2 * kClockSlots * kClockSms), last(2 * kClockSlots * kClockSms);
  CU_CHECK(driver().cuMemcpyDtoHAsync(first.data(), ptr_ + kFirstOffset, kWindowBytes, dev.stream()));
  CU_CHECK(driver().cuMemcpyDtoHAsync(last.data(), ptr_ + kLastOffset, kWindowBytes, dev.stream()));
  dev.sync("reading the clock probe");
  for (uint64_t g = 0; g < groups_; ++g) {
    double cycles = 0, ns = 0;
    for (unsigned j = 0; j < per_sample_; ++j) {
      const size_t base = 2 * kClockSms * size_t(g * per_sample_ + j);
      for (unsigned sm = 0; sm < kClockSms; ++sm) {
        const uint64_t* f = &first[base + 2 * sm];
        const uint64_t* l = &last[base + 2 * sm];
        if (f[0] == ~0ull || l[0] <= f[0] || l[1] <= f[1]) continue;  // no block on this SM, or no exit
        cycles += double(l[0] - f[0]);
        ns += double(l[1] - f[1]);
      }
    }
    if (ns > 0) out.mhz.push_back(1e3 * cycles / ns);
  }
  out.method = method_;
  if (out.mhz.empty()) out.method = "not measured: no probe completed (" + method_ + ")";
  return out;
}

ClockProbe::ClockProbe(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {
  dev_->make_current();
  try {
    CompiledImage img = nvrtc_compile(
        kProbeSource, "ar_clock_spin",
        {"-DAR_CLOCK_SLOTS=" + std::to_string(kClockSlots), "-DAR_CLOCK_SMS=" + std::to_string(kClockSms)},
        dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
        dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    CU_CHECK(driver().cuModuleLoadData(&module_, img.image.data()));
    CU_CHECK(driver().cuModuleGetFunction(&function_, module_, "ar_clock_spin"));
    slots_ =
        ClockSlots(module_, "probe kernel on the same stream before and after each probed sample (" +
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
  CU_CHECK(driver().cuLaunchKernel(function_, 1, 1, 1, 1, 1, 1, 0, dev_->stream(), params, nullptr));
}

std::shared_ptr<ClockProbe> clock_probe_for(const std::shared_ptr<Device>& dev) {
  std::lock_guard<std::mutex> lock(dev->library_mutex);
  if (!dev->clock_probe) dev->clock_probe = std::make_shared<ClockProbe>(dev);
  return std::static_pointer_cast<ClockProbe>(dev->clock_probe);
}

}  // namespace ar::cuda
