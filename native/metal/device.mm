// The Metal backend's device plumbing: shared-storage buffers and the sample runner (one command
// buffer per sample, GPU timestamps). The API facts relied on are cited where used (SDK headers;
// docs/design.md, "The Metal backend").
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <mach/mach_time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checks.h"
#include "core/errors.h"
#include "metal.h"

namespace ar::metal {

std::string describe(NSError* error) {
  if (!error) return "no error object";
  std::string s = error.localizedDescription ? std::string(error.localizedDescription.UTF8String) : std::string("?");
  s += " (" + std::string(error.domain.UTF8String) + " " + std::to_string(long(error.code)) + ")";
  return s;
}

NSArray<id<MTLDevice>>* all_devices() {
  // MTLCreateSystemDefaultDevice() is the GPU the system prefers (the only one on Apple silicon);
  // MTLCopyAllDevices() (macOS only) lists every GPU. Default first, the others after it.
  NSMutableArray<id<MTLDevice>>* out = [NSMutableArray array];
  id<MTLDevice> def = MTLCreateSystemDefaultDevice();
  if (def) [out addObject:def];
  for (id<MTLDevice> d in MTLCopyAllDevices())
    if (!def || d.registryID != def.registryID) [out addObject:d];
  return out;
}

// ---- buffers ---------------------------------------------------------------------------------------

MetalBuffer::MetalBuffer(std::shared_ptr<Device> dev, size_t nbytes) : dev_(std::move(dev)), nbytes_(nbytes) {
  @autoreleasepool {
    const NSUInteger max_len = dev_->device.maxBufferLength;
    if (nbytes > max_len)
      throw std::invalid_argument("buffer of " + std::to_string(nbytes) + " bytes exceeds this device's maxBufferLength (" +
                                  std::to_string(max_len) + " bytes)");
    // A zero-byte request still gets a (one-byte) buffer, so contents is a valid pointer.
    buffer_ = [dev_->device newBufferWithLength:std::max<size_t>(nbytes, 1)
                                        options:MTLResourceStorageModeShared | MTLResourceHazardTrackingModeTracked];
    if (!buffer_)
      throw DeviceError("[metal::newBufferWithLength] could not allocate " + std::to_string(nbytes) +
                        " bytes of shared memory (out of memory?)");
    std::memset([buffer_ contents], 0, std::max<size_t>(nbytes, 1));  // the contract: zero-filled
  }
}

// Unified memory: a copy through `contents`. No command buffer of this backend is in flight when
// Python calls these (run_samples waits for every one), so no synchronisation is needed.
void MetalBuffer::write(const void* src, size_t n, size_t offset) {
  check_range(n, offset, nbytes_, "write");
  if (n) std::memcpy(static_cast<char*>([buffer_ contents]) + offset, src, n);
}

void MetalBuffer::read(void* dst, size_t n, size_t offset) const {
  check_range(n, offset, nbytes_, "read");
  if (n) std::memcpy(dst, static_cast<const char*>([buffer_ contents]) + offset, n);
}

// ---- samples ---------------------------------------------------------------------------------------

const char* status_name(MTLCommandBufferStatus s) {
  switch (s) {
    case MTLCommandBufferStatusNotEnqueued: return "NotEnqueued";
    case MTLCommandBufferStatusEnqueued: return "Enqueued";
    case MTLCommandBufferStatusCommitted: return "Committed";
    case MTLCommandBufferStatusScheduled: return "Scheduled";
    case MTLCommandBufferStatusCompleted: return "Completed";
    case MTLCommandBufferStatusError: return "Error";
  }
  return "unknown";
}

double mach_seconds() {
  // mach/mach_time.h: mach_absolute_time() ticks, times numer/denom, are nanoseconds.
  static const mach_timebase_info_data_t tb = [] {
    mach_timebase_info_data_t t{};
    mach_timebase_info(&t);
    return t;
  }();
  return double(mach_absolute_time()) * double(tb.numer) / double(tb.denom) * 1e-9;
}

void synchronize_launches(Device& dev) {
  id<MTLCommandBuffer> last = nil;
  {
    std::lock_guard<std::mutex> lock(dev.mutex);
    last = dev.last_launch;
    dev.last_launch = nil;
  }
  if (last) [last waitUntilCompleted];
  std::string error;
  {
    std::lock_guard<std::mutex> lock(dev.launch_error->mutex);
    error.swap(dev.launch_error->message);
  }
  if (!error.empty()) throw DeviceError(error);
}

namespace {

double host_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A (host seconds, GPU ticks) pair taken as close together as the API allows. The CPU timestamp
// sampleTimestamps returns is in an unspecified unit on some systems, so the host side is the
// steady clock read around the call instead (the midpoint).
struct ClockPair {
  double host = 0.0;
  MTLTimestamp gpu = 0;
};
ClockPair sample_clocks(id<MTLDevice> device) {
  MTLTimestamp cpu = 0, gpu = 0;
  const double t0 = host_seconds();
  [device sampleTimestamps:&cpu gpuTimestamp:&gpu];
  const double t1 = host_seconds();
  return {0.5 * (t0 + t1), gpu};
}

std::string fixed(double x, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// One command buffer, filled by `encode`, committed and waited for; DeviceError naming `what` unless
// it completed. The caller holds dev.mutex and an autorelease pool.
id<MTLCommandBuffer> commit_and_wait(Device& dev, const std::function<void(id<MTLCommandBuffer>)>& encode,
                                     const char* what) {
  // Per-encoder execution status makes a fault name the pass it happened in.
  MTLCommandBufferDescriptor* cd = [MTLCommandBufferDescriptor new];
  cd.errorOptions = MTLCommandBufferErrorOptionEncoderExecutionStatus;
  id<MTLCommandBuffer> cb = [dev.queue commandBufferWithDescriptor:cd];
  if (!cb) throw DeviceError(std::string("[metal::commandBufferWithDescriptor] no command buffer for ") + what);
  encode(cb);
  [cb commit];
  [cb waitUntilCompleted];
  // MTLCommandBuffer.h: GPUStartTime / GPUEndTime read zero until the GPU has started / the CPU
  // has been notified of completion; they are read only once status == Completed
  // (docs/design.md, "The Metal backend").
  if (cb.status != MTLCommandBufferStatusCompleted)
    throw DeviceError(std::string("[metal::waitUntilCompleted] ") + what + ": command buffer ended with status " +
                      status_name(cb.status) + ": " + describe(cb.error));
  return cb;
}

}  // namespace

void commit_launch(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const std::string& what) {
  std::lock_guard<std::mutex> lock(dev.mutex);
  @autoreleasepool {
    id<MTLCommandBuffer> cb = [dev.queue commandBuffer];
    if (!cb) throw DeviceError("[metal::commandBuffer] no command buffer for " + what);
    encode(cb);
    // The handler runs on a Metal thread; it only copies a string under a mutex.
    std::shared_ptr<Device::LaunchError> errors = dev.launch_error;
    const std::string entry = what;
    [cb addCompletedHandler:^(id<MTLCommandBuffer> done) {
      if (done.status == MTLCommandBufferStatusCompleted) return;
      std::lock_guard<std::mutex> elock(errors->mutex);
      if (errors->message.empty())
        errors->message = "[metal::launch] " + entry + ": command buffer ended with status " + status_name(done.status) +
                          ": " + describe(done.error);
    }];
    [cb commit];
    dev.last_launch = cb;
  }
}

void run_once(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const char* what) {
  std::lock_guard<std::mutex> lock(dev.mutex);
  @autoreleasepool {
    commit_and_wait(dev, encode, what);
  }
}

std::vector<double> run_samples(Device& dev, uint64_t reps, bool counters, const Encode& encode, const char* what,
                                std::string* timer) {
  std::lock_guard<std::mutex> lock(dev.mutex);
  std::string fallback;  // why the command-buffer times are returned, when counters were wanted
  id<MTLCounterSampleBuffer> samples = nil;
  if (counters && !dev.timestamps) {
    fallback = "this device cannot sample timestamps at stage boundaries";
  } else if (counters) {
    @autoreleasepool {
      MTLCounterSampleBufferDescriptor* d = [MTLCounterSampleBufferDescriptor new];
      d.counterSet = dev.timestamps;
      // MTLCounters.h: resolveCounterRange: works only on shared-storage sample buffers.
      d.storageMode = MTLStorageModeShared;
      d.sampleCount = NSUInteger(2 * reps);
      NSError* err = nil;
      samples = [dev.device newCounterSampleBufferWithDescriptor:d error:&err];
      if (!samples) fallback = "newCounterSampleBufferWithDescriptor failed: " + describe(err);
    }
  }

  std::vector<double> cb_s(reps);
  const ClockPair c0 = samples ? sample_clocks(dev.device) : ClockPair{};
  for (uint64_t r = 0; r < reps; ++r) {
    @autoreleasepool {
      MTLComputePassDescriptor* pass = nil;
      if (samples) {
        pass = [MTLComputePassDescriptor computePassDescriptor];
        MTLComputePassSampleBufferAttachmentDescriptor* a = pass.sampleBufferAttachments[0];
        a.sampleBuffer = samples;
        a.startOfEncoderSampleIndex = NSUInteger(2 * r);
        a.endOfEncoderSampleIndex = NSUInteger(2 * r + 1);
      }
      id<MTLCommandBuffer> cb = commit_and_wait(dev, [&](id<MTLCommandBuffer> c) { encode(c, pass); }, what);
      const double t = cb.GPUEndTime - cb.GPUStartTime;
      if (!(t > 0.0))
        throw DeviceError(std::string("[metal::GPUEndTime] ") + what + ": the completed command buffer reports no GPU time (" +
                          std::to_string(t) + " s)");
      cb_s[r] = t;
    }
  }
  if (!samples) {
    if (timer) *timer = "command buffer GPUEndTime - GPUStartTime" + (fallback.empty() ? "" : " (counters: " + fallback + ")");
    return cb_s;
  }

  // Counter timestamps: reject 0, MTLCounterErrorValue (MTLCounters.h: what a sample that failed to
  // resolve reads) and end <= start (on macOS 26 some GPUs return zeros:
  // docs/design.md, "The Metal backend"), convert ticks with the period calibrated over the run,
  // and reject a pass longer than its own command buffer.
  const ClockPair c1 = sample_clocks(dev.device);
  std::vector<double> pass_s(reps);
  std::string bad;
  @autoreleasepool {
    NSData* data = [samples resolveCounterRange:NSMakeRange(0, NSUInteger(2 * reps))];
    const double host_span = c1.host - c0.host;
    if (!data || data.length < sizeof(MTLCounterResultTimestamp) * 2 * reps) {
      bad = "resolveCounterRange returned no data";
    } else if (c1.gpu <= c0.gpu || host_span < 1e-3) {
      bad = "the GPU tick could not be calibrated (" + std::to_string(c1.gpu - c0.gpu) + " ticks in " +
            fixed(host_span * 1e6, 0) + " us; at least 1 ms is needed)";
    } else {
      const double period = host_span / double(c1.gpu - c0.gpu);  // seconds per GPU tick
      const auto* ts = static_cast<const MTLCounterResultTimestamp*>(data.bytes);
      size_t invalid = 0, longer = 0;
      for (uint64_t r = 0; r < reps; ++r) {
        const uint64_t s = ts[2 * r].timestamp, e = ts[2 * r + 1].timestamp;
        if (s == 0 || e == 0 || s == MTLCounterErrorValue || e == MTLCounterErrorValue || e <= s) {
          ++invalid;
          continue;
        }
        pass_s[r] = double(e - s) * period;
        if (pass_s[r] > cb_s[r] * 1.02 + 5e-6) ++longer;
      }
      if (invalid)
        bad = std::to_string(invalid) + " of " + std::to_string(reps) + " counter samples were zero, MTLCounterErrorValue or end <= start";
      else if (longer)
        bad = std::to_string(longer) + " of " + std::to_string(reps) +
              " passes timed by the counters were longer than their command buffers (tick period " +
              fixed(period * 1e9, 3) + " ns)";
    }
  }
  if (!bad.empty()) {
    if (timer) *timer = "command buffer GPUEndTime - GPUStartTime (counters: " + bad + ")";
    return cb_s;
  }
  if (timer)
    *timer = "counter timestamps at the compute pass boundaries (each pass within its command buffer's "
             "GPUEndTime - GPUStartTime)";
  return pass_s;
}

}  // namespace ar::metal
