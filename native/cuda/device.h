// One CUDA device as this backend uses it: the driver's primary context and one stream on which
// every copy, kernel and cuBLAS call of the backend runs (docs/design/backends.md, "The CUDA backend"), plus
// the RAII handles the other files share. Vendor types stay in native/cuda/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/checks.h"
#include "loader.h"

namespace ar::cuda {

class Device {
 public:
  explicit Device(int index);  // retains the primary context, creates the stream; throws DeviceError
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  CUdevice device() const { return dev_; }
  CUstream stream() const { return stream_; }
  int attribute(CUdevice_attribute a) const;
  // Makes the context current on the calling thread (every entry point calls this first: Python
  // may call from any thread).
  void make_current() const;
  // Waits for the stream (core/waits.h: bounded, signals handled) and turns an asynchronous fault
  // into DeviceError naming `after`. A wait that ends otherwise (DeviceStopped, an interruption)
  // leaves work running on the stream and marks the device abandoned. The stream is polled, sleeping
  // between polls (no busy core while a sample runs); `host_timed` (a wait whose end the host's clock
  // times: synchronize and timeline) spins for kSpinS first.
  void sync(const char* after, bool host_timed = false) const;
  // Whether a wait was abandoned with work still running: the destructors of this device's objects
  // then skip the driver calls that could wait for that work (cuMemFree, cuModuleUnload, the
  // stream's and the context's release) and leave them to the process's exit.
  bool abandoned() const { return abandoned_.load(); }

  // Per-device state of an optional library (gemm.cpp keeps its cuBLAS handle and workspace here),
  // created on first use under `library_mutex`; released before the context is.
  std::shared_ptr<void> library_state;
  std::mutex library_mutex;
  // The clock probe for kernels that cannot be instrumented (clock_probe.cpp), under library_mutex.
  std::shared_ptr<void> clock_probe;

 private:
  int index_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  mutable std::atomic<bool> abandoned_{false};
};

// Device memory; zero-filled on allocation. Copies go through the device's stream, so they are
// ordered after every launch enqueued on it, and complete before write()/read() return (a launch's
// fault surfaces there as DeviceError). address() bypasses the stream (a DLPack consumer reads the
// memory on its own), so it first waits for the stream (core/backend.h).
class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<Device> dev, size_t nbytes);
  ~CudaBuffer() override;
  size_t nbytes() const override { return nbytes_; }
  void write(const void* src, size_t n, size_t offset) override;
  void read(void* dst, size_t n, size_t offset) const override;
  void fill32(uint32_t value, size_t n, size_t offset) override;  // cuMemsetD32Async on the device
  Address address() override;
  std::pair<int, int> dlpack_device() const override { return {Address::kCUDA, dev_->index()}; }
  CUdeviceptr ptr() const { return ptr_; }
  const Device* device() const { return dev_.get(); }

 private:
  std::shared_ptr<Device> dev_;
  size_t nbytes_;
  CUdeviceptr ptr_ = 0;
};

// The CudaBuffer behind a kernel argument, checked to belong to `dev`; std::invalid_argument else.
inline CudaBuffer& buffer_arg(Buffer* b, const Device& dev, size_t position) {
  return buffer_arg_of<CudaBuffer>(b, dev, position, "CUDA");
}

// Events bracketing each sample: record(start[i]) ... launches ... record(stop[i]) on the stream,
// then elapsed() waits for all of them and returns seconds per sample.
class SampleEvents {
 public:
  SampleEvents(const Device& dev, size_t samples);
  ~SampleEvents();
  SampleEvents(const SampleEvents&) = delete;
  SampleEvents& operator=(const SampleEvents&) = delete;
  void start(size_t i);
  void stop(size_t i);
  std::vector<double> elapsed(const char* what);

 private:
  const Device& dev_;
  std::vector<CUevent> start_, stop_;
};

// %globaltimer on the host's clock (clock_sync.cpp). A one-thread kernel spins on a flag in mapped
// host memory; the host raises the flag and waits for the kernel's acknowledgement, and the
// kernel's %globaltimer reading lies between the host's two steady-clock readings (NTP's offset
// estimate, Mills, RFC 5905 §8). The tightest of `rounds` pings gives the offset, ± half its
// width. The first pass also measures the timer's resolution (its smallest step).
struct TimerOffset {
  int64_t host_ns = 0;        // steady-clock ns of the best ping's midpoint
  int64_t offset_ns = 0;      // %globaltimer - steady clock, ns
  int64_t half_width_ns = 0;  // half the best ping's round trip: the offset's uncertainty
};
class GlobalTimerSync {
 public:
  explicit GlobalTimerSync(std::shared_ptr<Device> dev);  // compiles the ping kernel; DeviceError/CompileError
  ~GlobalTimerSync();
  GlobalTimerSync(const GlobalTimerSync&) = delete;
  GlobalTimerSync& operator=(const GlobalTimerSync&) = delete;
  TimerOffset measure(unsigned rounds);                     // DeviceError when the kernel does not answer within 2 s
  int64_t resolution_ns() const { return resolution_ns_; }  // 0 until measured, or when no step was seen

 private:
  std::shared_ptr<Device> dev_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  void* host_ = nullptr;  // [flag, ack] as uint32, then stamps as uint64 from byte 64
  CUdeviceptr device_ = 0;
  int64_t resolution_ns_ = 0;
};

// The effective SM clock of a time() call's samples (clock_probe.cpp; docs/design/clocks.md, "Clocks"):
// the `ar_clock` global of a module built with shaders/cuda/clock.cuh's probe (the probed twin of a
// timed kernel, or the cuBLAS probe kernel). Each probed launch has a slot, in which every SM keeps
// the window from its first block's entry to its last block's exit. begin() resets the slots and
// plans which samples are probed (at most kClockSlots probed launches per call, `per_sample` of
// them after each probed sample), point(s) directs the next probed launch at slot s (both enqueued
// on the stream, outside the timed events), reading() copies the windows back after the samples (the
// stream synchronised) and gives, per probed sample, Σ cycles / Σ ns over its launches' SM windows
// in MHz. A module without the global yields no values and says so.
constexpr unsigned kClockSlots = 64;  // clock.cuh's AR_CLOCK_SLOTS
constexpr unsigned kClockSms = 256;   // clock.cuh's AR_CLOCK_SMS
// Probed launches after a probed sample last at least this long together (by the previous call's
// launch time), so that a %globaltimer step (32 ns on an H100) stays under 0.1 % of the windows.
constexpr double kClockWindowS = 50e-6;
constexpr unsigned kClockMaxPerSample = 8;
class ClockSlots {
 public:
  ClockSlots() = default;
  ClockSlots(CUmodule module, std::string method);  // finds `ar_clock` (none: no values)
  bool present() const { return ptr_ != 0; }
  // Resets the slots; `reps` samples, `per_sample` probed launches after (or around) each probed
  // one, at most `most` samples probed (spread evenly over the call).
  void begin(const Device& dev, uint64_t reps, unsigned per_sample, uint64_t most = UINT64_MAX);
  bool probed(uint64_t r) const;                       // whether sample r is followed by probed launches
  unsigned slot(uint64_t r, unsigned j) const;         // the slot of sample r's j-th probed launch
  void point(const Device& dev, unsigned slot) const;  // the next probed launch writes `slot`
  ClockReading reading(const Device& dev) const;       // after the samples completed

 private:
  CUdeviceptr ptr_ = 0;
  std::string method_;
  uint64_t reps_ = 0;
  unsigned per_sample_ = 1;
  uint64_t groups_ = 0;  // probed samples: min(reps, kClockSlots / per_sample, most)
};
// How many probed launches follow a probed sample: enough to last kClockWindowS at `launch_s`
// seconds per launch (the previous call's; 0: unknown, one launch), at most kClockMaxPerSample.
unsigned probes_per_sample(double launch_s);
// The most work the probed launches of a call may add to its samples (launches after probed samples
// over launches in all samples), and the fewest samples probed (all where a call has fewer). A
// probed launch is the kernel's whole work again: after every sample of one launch it doubles what
// the GPU does, and a kernel at its power limit then steps its clock down sooner.
constexpr double kProbeShare = 0.25;
constexpr uint64_t kMinProbedSamples = 3;
// How many of `reps` samples of `batch` launches are probed, `per_sample` probed launches after
// each: within kProbeShare of the samples' launches, at least kMinProbedSamples (or `reps`), at most
// kClockSlots / per_sample.
uint64_t probed_samples(uint64_t reps, uint64_t batch, unsigned per_sample);

// A probe for kernels that cannot be instrumented (cuBLAS): one block spinning about kProbeNs on
// %clock64 / %globaltimer into the same slots, launched before and after each sample on the same
// stream. Built with NVRTC on first use per device; where it cannot be, reason() says why.
constexpr uint64_t kProbeNs = 200000;
class ClockProbe {
 public:
  explicit ClockProbe(std::shared_ptr<Device> dev);  // never throws for NVRTC: reason() then says why
  ~ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;
  const std::string& reason() const { return reason_; }
  ClockSlots& slots() { return slots_; }
  void run();  // enqueues one probe on the stream

 private:
  std::shared_ptr<Device> dev_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  ClockSlots slots_;
  std::string reason_;
};
// The device's probe, created on first use (shared by every cuBLAS kernel of the device).
std::shared_ptr<ClockProbe> clock_probe_for(const std::shared_ptr<Device>& dev);

// Steady-clock nanoseconds (the host clock of every CUDA timeline).
int64_t steady_ns();

// cuBLAS GEMM (gemm.cpp): the Kernel returned by CudaBackend::gemm.
std::shared_ptr<Kernel> make_cublas_gemm(std::shared_ptr<Device> dev, const std::string& dtype, int64_t m, int64_t n,
                                         int64_t k);
// cuBLAS's version ("13.1.0"), or "" with *why set when cuBLAS cannot be loaded.
std::string cublas_version(std::string* why);

// NVRTC (compile.cpp): compile `source` for the device's architecture; returns a cubin (or PTX when
// the device is newer than NVRTC knows) ready for cuModuleLoadData. Throws CompileError with the log.
struct CompiledImage {
  std::vector<char> image;
  std::string target;  // "sm_90" (cubin) or "compute_90" (PTX, JIT-compiled by the driver)
  std::string log;
};
// arch_specific: compile for the arch-specific target sm_XYa (e.g. sm_90a, whose wgmma no other
// architecture runs) instead of sm_XY; a CompileError saying why where NVRTC cannot.
CompiledImage nvrtc_compile(const std::string& source, const std::string& entry,
                            const std::vector<std::string>& options, int cc_major, int cc_minor,
                            bool arch_specific = false);
// The target NVRTC would compile for on this device ("sm_90", or "sm_90a" with arch_specific), or
// "" with *why set.
std::string nvrtc_target(int cc_major, int cc_minor, std::string* why, bool arch_specific = false);
std::string nvrtc_version(std::string* why);

}  // namespace ar::cuda
