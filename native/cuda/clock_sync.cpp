// %globaltimer mapped onto the host's steady clock (device.h, GlobalTimerSync): the CUDA half of
// the dispatch study's start latency. The ping kernel is the backend's own (not a benchmark
// kernel), so its source lives here rather than in shaders/.
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "device.h"

namespace ar::cuda {

namespace {

constexpr unsigned kMaxRounds = 1000;
constexpr size_t kStampOffset = 64;  // bytes: stamps start on their own cache line

// flag[0]: the host's round number; flag[1]: the kernel's acknowledgement. stamp[0]: the smallest
// step of %globaltimer seen in 4096 reads (0: none); stamp[k]: the timer when round k was seen.
// `flag[0] < k` (not `!=`) lets the host release a kernel it has given up on by raising the flag
// past the last round.
const char* kPingSource = R"(
extern "C" __global__ void ar_globaltimer_ping(volatile unsigned int* flag, volatile unsigned long long* stamp,
                                               unsigned int rounds) {
  unsigned long long t0, t1, step = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int i = 0; i < 4096; ++i) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (t1 != t0) {
      if (step == 0 || t1 - t0 < step) step = t1 - t0;
      t0 = t1;
    }
  }
  stamp[0] = step;
  for (unsigned int k = 1; k <= rounds; ++k) {
    while (flag[0] < k) {
    }
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    stamp[k] = t;
    __threadfence_system();
    flag[1] = k;
  }
}
)";

}  // namespace

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

GlobalTimerSync::GlobalTimerSync(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {
  const DriverApi& d = driver();
  dev_->make_current();
  CompiledImage img = nvrtc_compile(kPingSource, "ar_globaltimer_ping", {},
                                    dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                                    dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  CU_CHECK(d.cuModuleLoadData(&module_, img.image.data()));
  CU_CHECK(d.cuModuleGetFunction(&function_, module_, "ar_globaltimer_ping"));
  // cuda.h: CU_MEMHOSTALLOC_DEVICEMAP maps the pinned memory into the device's address space;
  // cuMemHostGetDevicePointer gives the device's pointer to it (Flags must be 0).
  const size_t bytes = kStampOffset + sizeof(uint64_t) * (kMaxRounds + 1);
  CU_CHECK(d.cuMemHostAlloc(&host_, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  std::memset(host_, 0, bytes);
  CU_CHECK(d.cuMemHostGetDevicePointer(&device_, host_, 0));
}

GlobalTimerSync::~GlobalTimerSync() {
  if (dev_->abandoned()) return;  // the frees could wait for the work still running
  try {
    dev_->make_current();
    if (host_) driver().cuMemFreeHost(host_);
    if (module_) driver().cuModuleUnload(module_);
  } catch (...) {
  }
}

TimerOffset GlobalTimerSync::measure(unsigned rounds) {
  if (rounds < 1 || rounds > kMaxRounds)
    throw std::invalid_argument("ping rounds " + std::to_string(rounds) + " out of range (valid: 1 to 1000)");
  const DriverApi& d = driver();
  dev_->make_current();
  dev_->sync("the stream before the %globaltimer ping");
  volatile uint32_t* flag = static_cast<volatile uint32_t*>(host_);
  volatile uint64_t* stamp = reinterpret_cast<volatile uint64_t*>(static_cast<char*>(host_) + kStampOffset);
  flag[0] = 0;
  flag[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CUdeviceptr dflag = device_, dstamp = device_ + kStampOffset;
  unsigned r = rounds;
  void* params[] = {&dflag, &dstamp, &r};
  CU_CHECK(d.cuLaunchKernel(function_, 1, 1, 1, 1, 1, 1, 0, dev_->stream(), params, nullptr));

  std::vector<int64_t> t0(rounds + 1), t1(rounds + 1);
  for (unsigned k = 1; k <= rounds; ++k) {
    t0[k] = steady_ns();
    flag[0] = k;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (flag[1] != k) {
      if (steady_ns() - t0[k] > 2'000'000'000) {
        flag[0] = rounds + 1;  // release the kernel, then give up
        std::atomic_thread_fence(std::memory_order_seq_cst);
        dev_->sync("the %globaltimer ping");
        throw DeviceError("[cuda::globaltimer] the ping kernel did not answer round " + std::to_string(k) +
                          " within 2 s (is mapped host memory visible to the device?)");
      }
    }
    t1[k] = steady_ns();
  }
  dev_->sync("the %globaltimer ping");
  resolution_ns_ = int64_t(stamp[0]);
  unsigned best = 1;
  for (unsigned k = 2; k <= rounds; ++k)
    if (t1[k] - t0[k] < t1[best] - t0[best]) best = k;
  TimerOffset out;
  out.host_ns = t0[best] + (t1[best] - t0[best]) / 2;
  out.offset_ns = int64_t(stamp[best]) - out.host_ns;
  out.half_width_ns = (t1[best] - t0[best] + 1) / 2;
  return out;
}

}  // namespace ar::cuda
