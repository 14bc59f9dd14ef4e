// The Metal backend's shared declarations (Objective-C++, ARC; included by native/metal/*.mm only).
// Metal types never leave this folder: the rest of the core sees core/backend.h's plain C++.
//
// Deployment target: macOS 13.0 (CMAKE_OSX_DEPLOYMENT_TARGET, see native/CMakeLists.txt): Metal
// Shading Language 3.0, Accelerate's new CBLAS (13.3, availability-guarded) and BNNSMatMul (13.0).
// APIs newer than that (MTLDevice.architecture, macOS 14) are behind @available.
#pragma once

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/checks.h"
#include "core/metal_rules.h"
#include "pool.h"

namespace ar::metal {

// "<localizedDescription> (<domain> <code>)", or "no error object" for nil (metal_rules::error_text).
std::string describe(NSError* error);

// One Metal device as the backend uses it: the device, one command queue on which every command
// buffer of the backend runs (so samples never overlap), and the timestamp counter set where the
// device can sample it at stage boundaries (the only sampling point Apple GPUs support).
struct Device {
  id<MTLDevice> device = nil;
  // newCommandQueueWithMaxCommandBufferCount:metal_rules::kQueueDepth (the default queue blocks
  // at 64 uncompleted command buffers, MTLDevice.h).
  id<MTLCommandQueue> queue = nil;
  id<MTLCounterSet> timestamps = nil;  // nil: counters unsupported, command-buffer times only
  int index = 0;
  // Serialises command-buffer submission: Python may call from several threads.
  std::mutex mutex;
  // Kernel::launch's command buffers (committed, not waited for): the last one and what it ran,
  // which synchronize_launches waits for (one queue runs them in order; guarded by `mutex`), and
  // the bookkeeping of all of them: a slot each, taken before `mutex`, given back with the launch's
  // error by its completed handler (which runs on a Metal thread and may outlive a call, hence the
  // shared_ptr).
  id<MTLCommandBuffer> last_launch = nil;
  std::string last_launch_what;
  std::shared_ptr<metal_rules::InFlight> launches =
      std::make_shared<metal_rules::InFlight>(metal_rules::kLaunchesInFlight);
};

// Waits for every command buffer Kernel::launch committed: the last one, whose own status and
// error are checked after the wait, and the completed handlers of all of them (MTLCommandBuffer.h:
// at Completed the handlers "may now be called", so a handler may still be running when the wait
// returns). Throws DeviceError naming the first launch that ended in error since the previous call
// (and forgets it). MetalBuffer's reads, writes and host pointer call it first (core/backend.h).
void synchronize_launches(Device& dev);

// Host time in seconds on mach_absolute_time (mach/mach_time.h): the clock that
// MTLCommandBuffer.h's GPUStartTime / GPUEndTime ("the host time in seconds") are given in.
double mach_seconds();

// The devices of this machine, in MTLCopyAllDevices order with the system default first.
NSArray<id<MTLDevice>>* all_devices();

// MTLStorageModeShared memory: the CPU and GPU see the same bytes (unified memory), so host_ptr()
// is the buffer's `contents` and Python views it without a copy. MTLResource.h, on
// MTLStorageModeShared: "coherency is only guaranteed at command buffer boundaries": time() waits
// for its command buffers before returning, and read(), write() and host_ptr() first wait for the
// launches still running (synchronize_launches, raising their error), so the memory is idle
// whenever Python touches it through them (core/backend.h).
class MetalBuffer final : public Buffer {
 public:
  MetalBuffer(std::shared_ptr<Device> dev, size_t nbytes);  // zero-filled; DeviceError when out of memory
  size_t nbytes() const override { return nbytes_; }
  void* host_ptr() override;
  void write(const void* src, size_t n, size_t offset) override;
  void read(void* dst, size_t n, size_t offset) const override;
  id<MTLBuffer> buffer() const { return buffer_; }
  const Device* device() const { return dev_.get(); }

 private:
  std::shared_ptr<Device> dev_;
  size_t nbytes_;
  id<MTLBuffer> buffer_ = nil;
};

// The MetalBuffer behind kernel argument `position`, checked to belong to `dev`; else
// std::invalid_argument naming the argument.
inline MetalBuffer& buffer_arg(Buffer* b, const Device& dev, size_t position) {
  return buffer_arg_of<MetalBuffer>(b, dev, position, "Metal");
}

// Encodes one sample's work into `cb`. `pass` is a compute pass descriptor carrying the sample
// buffer attachment when the sample is counter-timed (encode a single compute pass with it), nil
// otherwise (encode anything, e.g. an MPS kernel or render passes, which run_samples times with
// counters off).
using Encode = std::function<void(id<MTLCommandBuffer> cb, MTLComputePassDescriptor* pass)>;

// Runs `reps` samples, one command buffer each, committed and waited for in turn (the GIL is
// released by the caller), and returns the seconds of each sample as metal_rules::choose_samples
// decides (docs/design/backends.md, "The Metal backend"): with `counters` and a device that samples
// timestamps at stage boundaries, the pass times from counter sample buffers of at most
// metal_rules::kMaxSamplesPerBuffer samples each, converted with metal_rules::tick_period; else,
// or when any reading is doubtful, the command buffers' GPUEndTime - GPUStartTime. `*timer` says
// which, and why a fallback happened. Throws DeviceError when a command buffer ends in error (its
// status and NSError), naming `what`.
std::vector<double> run_samples(Device& dev, uint64_t reps, bool counters, const Encode& encode, const char* what,
                                std::string* timer);

// Kernel::launch's path (docs/design/measurement.md, "The backend interface"): takes a slot of dev.launches
// (waiting, without dev.mutex, while the queue is full), then under dev.mutex one command buffer
// that `encode` fills, committed and left running as dev.last_launch. Its completed handler gives
// the slot back with its error (naming `what`), which synchronize_launches raises.
void commit_launch(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const std::string& what);

// Commits one command buffer that `encode` fills, waits for it and throws DeviceError naming `what`
// unless it completed. Takes dev.mutex.
void run_once(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const char* what);

// Waits until `cb` has completed or failed, polling its status through wait_until (core/waits.h):
// DeviceStopped naming `what` (or the thread's pass) after the thread's bound; signals are handled
// meanwhile. Never blocks in waitUntilCompleted on a command buffer that has not ended. For waits the
// host's clock times (timeline, synchronize_launches): it spins for kSpinS before sleeping between
// polls. run_samples' waits sleep on the command buffer's completed handler instead.
void wait_completed(id<MTLCommandBuffer> cb, const std::string& what);

// DeviceError naming `what` (metal_rules::command_buffer_failure) unless `cb` completed; call after
// waiting for it.
void check_completed(id<MTLCommandBuffer> cb, const std::string& call, const std::string& what);

// Info keys of the device (device_info.mm): name, GPU family, GPU core count, memory, limits.
Info device_info(const Device& dev);

// Runtime compilation (compile.mm): library from MSL source (math mode pinned), function
// specialised by function constants, compute pipeline or (render passes) vertex and fragment
// functions; cached per backend, and each compute pipeline's binary archive on disk (core/kernel_cache.h).
struct Pipeline {
  id<MTLComputePipelineState> state = nil;
  std::string entry;
  NSUInteger threadgroup = 0;  // threads per threadgroup (the constant BLOCK)
};
class Compiler {
 public:
  explicit Compiler(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {}
  // Throws CompileError (with the compiler's log) for source that does not compile, a missing
  // entry or constants the function rejects; std::invalid_argument for a bad constant name, type
  // or BLOCK.
  std::shared_ptr<Pipeline> pipeline(const std::string& source, const std::string& entry, const Constants& constants);
  // Function `entry` of `source`, of stage `type` (MTLFunctionTypeVertex / Fragment / Kernel),
  // specialised by `constants` (BLOCK is an ordinary constant outside compute kernels); cached.
  // Throws as pipeline() does, and CompileError when `entry` is a function of another stage.
  id<MTLFunction> function(const std::string& source, const std::string& entry, const Constants& constants,
                           MTLFunctionType type);
  // "safe (fastMathEnabled = NO)" or "safe (mathMode = MTLMathModeSafe)"; the MSL versions sources
  // are compiled with on this macOS (metal_rules::msl_versions; each library's own is
  // metal_rules::msl_version of its source, which is also part of its archive's cache key).
  static std::string math_mode();
  static std::string language_versions();

 private:
  // Both called with mutex_ held.
  id<MTLLibrary> library(const std::string& source, const std::string& entry);
  id<MTLFunction> specialise(id<MTLLibrary> lib, const std::string& entry, const Constants& constants,
                             MTLFunctionType type);
  // Every function constant the functions of `lib` declare (metal_rules::constant_plan's source
  // list), read once per library.
  std::vector<std::string> source_constants(id<MTLLibrary> lib);

  std::shared_ptr<Device> dev_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Pipeline>> cache_;            // (entry, constants, source) -> pipeline
  std::map<std::string, id<MTLFunction>> functions_;                  // (stage, entry, constants, source) -> function
  std::map<std::string, id<MTLLibrary>> libraries_;                   // source -> library
  std::map<const void*, std::vector<std::string>> source_constants_;  // library -> its constants
};

// A compiled compute kernel (kernel.mm): binds the arguments by the core/backend.h convention and
// times `batch` dispatches per sample in one compute pass.
std::shared_ptr<Kernel> make_compute_kernel(std::shared_ptr<Device> dev, std::shared_ptr<Pipeline> pipeline);

// A render pass of the graphics study (render.mm; core/backend.h, RenderSpec): the pipeline built
// from `compiler`'s vertex and fragment functions, a private-storage target, the texture uploaded
// once; timed by run_samples on the command buffers' times.
std::shared_ptr<RenderPass> make_render_pass(std::shared_ptr<Device> dev, Compiler& compiler, const RenderSpec& spec);

// MetalPerformanceShaders GEMM (gemm_mps.mm): fp32 and fp16 MPSMatrixMultiplication as a Kernel
// whose args are {A, B, C}; UnsupportedError for other precisions.
std::shared_ptr<Kernel> make_mps_gemm(std::shared_ptr<Device> dev, const std::string& dtype, int64_t m, int64_t n,
                                      int64_t k);

}  // namespace ar::metal
