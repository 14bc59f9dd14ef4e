// The Metal backend's device plumbing: shared-storage buffers and the sample runner (one command
// buffer per sample, GPU timestamps). The API facts relied on are cited where used (SDK headers;
// docs/design/backends.md, "The Metal backend").
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
#include "core/waits.h"
#include "metal.h"

namespace ar::metal {

static_assert(metal_rules::kCounterErrorValue == MTLCounterErrorValue, "MTLCounters.h's MTLCounterErrorValue");
static_assert(metal_rules::kStatusCompleted == MTLCommandBufferStatusCompleted, "MTLCommandBuffer.h's Completed");
static_assert(MTLCommandBufferStatusNotEnqueued == 0 && MTLCommandBufferStatusError == 5,
              "metal_rules::status_name's table follows MTLCommandBuffer.h's raw values");

std::string describe(NSError* error) {
  if (!error) return "no error object";
  return metal_rules::error_text(error.localizedDescription ? std::string(error.localizedDescription.UTF8String) : "",
                                 error.domain ? std::string(error.domain.UTF8String) : "?", int64_t(error.code));
}

void wait_completed(id<MTLCommandBuffer> cb, const std::string& what) {
  // MTLCommandBuffer.h: status reaches Completed or Error (the last two stages) once the command
  // buffer has ended. It is polled through wait_until (core/waits.h) rather than blocked on, so a
  // command buffer that never ends gives DeviceStopped after the thread's bound; the host times this
  // wait's end (timeline, synchronize), so it spins for kSpinS before sleeping between polls. Then
  // waitUntilCompleted, which returns at once, keeps the point at which GPUEndTime is read the same.
  wait_until([&] { return cb.status >= MTLCommandBufferStatusCompleted; }, what, kSpinS);
  [cb waitUntilCompleted];
}

void check_completed(id<MTLCommandBuffer> cb, const std::string& call, const std::string& what) {
  // MTLCommandBuffer.h: GPUStartTime / GPUEndTime read zero until the GPU has started / the CPU
  // has been notified of completion; they are read only once status == Completed.
  if (cb.status != MTLCommandBufferStatusCompleted)
    throw DeviceError(metal_rules::command_buffer_failure(call, what, int64_t(cb.status), describe(cb.error)));
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
  const NSUInteger max_len = dev_->device.maxBufferLength;
  if (nbytes > max_len)
    throw std::invalid_argument("buffer of " + std::to_string(nbytes) +
                                " bytes exceeds this device's maxBufferLength (" + std::to_string(max_len) + " bytes)");
  pooled([&] {
    // A zero-byte request still gets a (one-byte) buffer, so contents is a valid pointer.
    buffer_ = [dev_->device newBufferWithLength:std::max<size_t>(nbytes, 1)
                                        options:MTLResourceStorageModeShared | MTLResourceHazardTrackingModeTracked];
  });
  if (!buffer_)
    throw DeviceError("[metal::newBufferWithLength] could not allocate " + std::to_string(nbytes) +
                      " bytes of shared memory (out of memory?)");
  std::memset([buffer_ contents], 0, std::max<size_t>(nbytes, 1));  // the contract: zero-filled
}

// Unified memory: a copy through `contents`, once the launches still running have completed
// (core/backend.h: reads, writes and host pointers wait for the backend's outstanding work).
void* MetalBuffer::host_ptr() {
  synchronize_launches(*dev_);
  return [buffer_ contents];
}

void MetalBuffer::write(const void* src, size_t n, size_t offset) {
  check_range(n, offset, nbytes_, "write");
  synchronize_launches(*dev_);
  if (n) std::memcpy(static_cast<char*>([buffer_ contents]) + offset, src, n);
}

void MetalBuffer::read(void* dst, size_t n, size_t offset) const {
  check_range(n, offset, nbytes_, "read");
  synchronize_launches(*dev_);
  if (n) std::memcpy(dst, static_cast<const char*>([buffer_ contents]) + offset, n);
}

// ---- samples ---------------------------------------------------------------------------------------

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
  std::string what;
  {
    std::lock_guard<std::mutex> lock(dev.mutex);
    last = dev.last_launch;
    what = dev.last_launch_what;
    dev.last_launch = nil;
  }
  std::string own;
  if (last) {
    pooled([&] {
      wait_completed(last, "the launches of " + what);
      // MTLCommandBuffer.h: at Completed "any blocks set with -addCompletedHandler: may now be
      // called": the handler may not have run yet, so the command buffer's own status and error
      // are read here, and every handler is waited for below.
      if (last.status != MTLCommandBufferStatusCompleted)
        own = metal_rules::command_buffer_failure("launch", what, int64_t(last.status), describe(last.error));
    });
  }
  const std::string first = dev.launches->wait_idle();
  if (!first.empty()) throw DeviceError(first);
  if (!own.empty()) throw DeviceError(own);
}

namespace {

double host_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Both clocks read as close together as the API allows (metal_rules::ClockPair). The CPU timestamp
// sampleTimestamps returns is in an unspecified unit on some systems, so the host side is the
// steady clock read around the call: its midpoint, within half the gap.
metal_rules::ClockPair sample_clocks(id<MTLDevice> device) {
  MTLTimestamp cpu = 0, gpu = 0;
  const double t0 = host_seconds();
  [device sampleTimestamps:&cpu gpuTimestamp:&gpu];
  const double t1 = host_seconds();
  return {0.5 * (t0 + t1), 0.5 * (t1 - t0), uint64_t(gpu)};
}

// One command buffer, filled by `encode`, committed and waited for; DeviceError naming `what` unless
// it completed. The caller holds dev.mutex and an autorelease pool. A plain command buffer, as
// Kernel::launch and timeline make: MTLCommandBuffer.h warns that
// MTLCommandBufferErrorOptionEncoderExecutionStatus "may increase CPU, GPU, and/or memory
// overhead", and nothing here reads the per-encoder status it buys, so every path of the backend
// times identically configured command buffers.
//
// The GPU's own clock times these samples, so the wait sleeps: the command buffer's completed
// handler signals a Completion, waited on in slices (core/waits.h: the thread's bound, signals), and
// no core spins while the GPU runs. The handler holds `keep` (the sample's counter sample buffer)
// until the command buffer has completed, so a wait abandoned by DeviceStopped or a signal never
// releases memory the pass may still write.
id<MTLCommandBuffer> commit_and_wait(Device& dev, const std::function<void(id<MTLCommandBuffer>)>& encode,
                                     const char* what, id keep = nil) {
  id<MTLCommandBuffer> cb = [dev.queue commandBuffer];
  if (!cb) throw DeviceError(std::string("[metal::commandBuffer] no command buffer for ") + what);
  encode(cb);
  auto done = std::make_shared<Completion>();
  [cb addCompletedHandler:^(id<MTLCommandBuffer>) {
    (void)keep;  // captured, so retained by the block until the handler has run
    done->signal();
  }];
  [cb commit];
  wait_for(*done, what);
  // MTLCommandBuffer.h: at Completed "any blocks set with -addCompletedHandler: may now be called";
  // the handler has run, so the status is final and GPUStartTime / GPUEndTime are set.
  check_completed(cb, "waitUntilCompleted", what);
  return cb;
}

// A shared-storage counter sample buffer of `samples` timestamps, or nil with *why set.
id<MTLCounterSampleBuffer> sample_buffer(Device& dev, uint64_t samples, std::string* why) {
  MTLCounterSampleBufferDescriptor* d = [MTLCounterSampleBufferDescriptor new];
  d.counterSet = dev.timestamps;
  // MTLCounters.h: resolveCounterRange: works only on shared-storage sample buffers.
  d.storageMode = MTLStorageModeShared;
  d.sampleCount = NSUInteger(samples);  // at most metal_rules::kMaxSamplesPerBuffer
  NSError* err = nil;
  id<MTLCounterSampleBuffer> b = [dev.device newCounterSampleBufferWithDescriptor:d error:&err];
  if (!b)
    *why = "newCounterSampleBufferWithDescriptor (" + std::to_string(samples) + " samples) failed: " + describe(err);
  return b;
}

}  // namespace

void commit_launch(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const std::string& what) {
  const std::shared_ptr<metal_rules::InFlight> launches = dev.launches;
  launches->acquire();  // before dev.mutex: a full queue makes this thread wait, no thread holding the mutex
  bool committed = false;
  try {
    std::lock_guard<std::mutex> lock(dev.mutex);
    pooled([&] {
      id<MTLCommandBuffer> cb = [dev.queue commandBuffer];
      if (!cb) throw DeviceError("[metal::commandBuffer] no command buffer for " + what);
      encode(cb);
      // The handler runs on a Metal thread; it only hands a string to the InFlight under its mutex.
      const std::string entry = what;
      [cb addCompletedHandler:^(id<MTLCommandBuffer> done) {
        launches->complete(
            done.status == MTLCommandBufferStatusCompleted
                ? std::string()
                : metal_rules::command_buffer_failure("launch", entry, int64_t(done.status), describe(done.error)));
      }];
      [cb commit];
      committed = true;
      dev.last_launch = cb;
      dev.last_launch_what = what;
    });
  } catch (...) {
    if (!committed) launches->abandon();  // no handler will give the slot back
    throw;
  }
}

void run_once(Device& dev, const std::function<void(id<MTLCommandBuffer> cb)>& encode, const char* what) {
  std::lock_guard<std::mutex> lock(dev.mutex);
  pooled([&] { commit_and_wait(dev, encode, what); });
}

std::vector<double> run_samples(Device& dev, uint64_t reps, bool counters, const Encode& encode, const char* what,
                                std::string* timer) {
  std::lock_guard<std::mutex> lock(dev.mutex);
  metal_rules::CounterRun run;
  run.wanted = counters;
  if (counters && !dev.timestamps) run.unavailable = "this device cannot sample timestamps at stage boundaries";
  const bool sampling = counters && dev.timestamps;
  if (sampling) {
    // Every Apple-silicon GPU is MTLGPUFamilyApple7 or later (MTLDevice.h: Apple7 = 1007, the M1);
    // there the ticks are nanoseconds (metal_rules::tick_period).
    run.apple_family = [dev.device supportsFamily:MTLGPUFamilyApple7];
    run.ticks.assign(size_t(2 * reps), 0);
    run.before = sample_clocks(dev.device);
  }
  std::vector<double> cb_s(reps);
  // One counter sample buffer per chunk of samples (metal_rules::sample_chunks: Apple GPUs cap a
  // sample buffer at 4096 timestamps), resolved once the chunk's command buffers completed.
  for (const metal_rules::SampleChunk& chunk : metal_rules::sample_chunks(reps)) {
    id<MTLCounterSampleBuffer> samples = nil;
    if (sampling && run.unavailable.empty())
      pooled([&] { samples = sample_buffer(dev, 2 * chunk.reps, &run.unavailable); });
    for (uint64_t i = 0; i < chunk.reps; ++i) {
      pooled([&] {
        MTLComputePassDescriptor* pass = nil;
        if (samples) {
          pass = [MTLComputePassDescriptor computePassDescriptor];
          MTLComputePassSampleBufferAttachmentDescriptor* a = pass.sampleBufferAttachments[0];
          a.sampleBuffer = samples;
          a.startOfEncoderSampleIndex = NSUInteger(2 * i);
          a.endOfEncoderSampleIndex = NSUInteger(2 * i + 1);
        }
        id<MTLCommandBuffer> cb = commit_and_wait(dev, [&](id<MTLCommandBuffer> c) { encode(c, pass); }, what, samples);
        cb_s[chunk.first + i] = cb.GPUEndTime - cb.GPUStartTime;
      });
    }
    if (samples) {
      pooled([&] {
        NSData* data = [samples resolveCounterRange:NSMakeRange(0, NSUInteger(2 * chunk.reps))];
        if (!data || data.length < sizeof(MTLCounterResultTimestamp) * 2 * chunk.reps) {
          run.unavailable = "resolveCounterRange returned no data";
          return;
        }
        const auto* ts = static_cast<const MTLCounterResultTimestamp*>(data.bytes);
        for (uint64_t k = 0; k < 2 * chunk.reps; ++k) run.ticks[size_t(2 * chunk.first + k)] = ts[k].timestamp;
      });
    }
  }
  if (sampling) run.after = sample_clocks(dev.device);
  metal_rules::SampleSet set = metal_rules::choose_samples(cb_s, run, what);
  if (timer) *timer = std::move(set.timer);
  return std::move(set.seconds);
}

}  // namespace ar::metal
