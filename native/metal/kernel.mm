// A compiled Metal compute kernel: arguments bound by the core/backend.h convention, `batch`
// dispatches per sample in one compute pass of one command buffer, timed by run_samples.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/checks.h"
#include "core/errors.h"
#include "metal.h"

namespace ar::metal {
namespace {

class MetalKernel final : public Kernel {
 public:
  MetalKernel(std::shared_ptr<Device> dev, std::shared_ptr<Pipeline> p) : dev_(std::move(dev)), p_(std::move(p)) {}
  std::string entry() const override { return p_->entry; }
  // MTLComputePipeline.h: threadExecutionWidth is the SIMD group's width, maxTotalThreadsPerThreadgroup
  // the largest threadgroup this pipeline can dispatch (it depends on the function's registers and
  // threadgroup memory, not on the threadgroup size chosen).
  uint32_t block() const override { return uint32_t(p_->threadgroup); }
  uint32_t simd_width() const override { return uint32_t(p_->state.threadExecutionWidth); }
  uint32_t max_block() const override { return uint32_t(p_->state.maxTotalThreadsPerThreadgroup); }
  std::string timer() const override {
    std::lock_guard<std::mutex> lock(timer_mutex_);
    return timer_;
  }

  std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                           bool /*clock: Metal measures none per sample*/) override {
    if (batch == 0) throw std::invalid_argument("batch must be at least 1 launch per sample");
    if (reps == 0) throw std::invalid_argument("reps must be at least 1 sample");
    const std::vector<Bound> bound = bind(args, work_items);
    const Encode encode = [&](id<MTLCommandBuffer> cb, MTLComputePassDescriptor* pass) {
      id<MTLComputeCommandEncoder> enc =
          pass ? [cb computeCommandEncoderWithDescriptor:pass] : [cb computeCommandEncoder];
      this->encode(enc, bound, work_items, batch);
    };
    std::string how;
    std::vector<double> out = run_samples(*dev_, reps, true, encode, p_->entry.c_str(), &how);
    {
      std::lock_guard<std::mutex> lock(timer_mutex_);
      timer_ = how;
    }
    return out;
  }

  // One command buffer with one dispatch, committed and left running (commit_launch): Backend::synchronize
  // waits for it and raises the first launch that ended in error.
  void launch(const std::vector<Arg>& args, uint64_t work_items) override {
    const std::vector<Bound> bound = bind(args, work_items);
    commit_launch(
        *dev_, [&](id<MTLCommandBuffer> cb) { encode([cb computeCommandEncoder], bound, work_items, 1); }, p_->entry);
  }

  // The steps of `reps` round trips as a user's code takes them: call -> create (commandBuffer
  // returned) -> encode (endEncoding returned) -> commit (commit returned) -> start (GPUStartTime)
  // -> execute (GPUEndTime) -> complete (waitUntilCompleted returned). Host instants come from
  // mach_absolute_time, the clock GPUStartTime / GPUEndTime are given in (MTLCommandBuffer.h:
  // "the host time in seconds"), so no mapping is needed.
  Timeline timeline(const std::vector<Arg>& args, uint64_t work_items, uint64_t reps) override {
    if (reps == 0) throw std::invalid_argument("reps must be at least 1 launch");
    const std::vector<Bound> bound = bind(args, work_items);
    synchronize_launches(*dev_);
    std::lock_guard<std::mutex> lock(dev_->mutex);
    Timeline tl;
    tl.events = {"call", "create", "encode", "commit", "start", "execute", "complete"};
    tl.submit = "encode";  // commit is called at the instant encoding ends
    tl.start = "start";
    tl.clock = "host mach_absolute_time; GPU start and end from the command buffer's GPUStartTime and GPUEndTime "
               "(host time, MTLCommandBuffer.h)";
    for (uint64_t r = 0; r < reps; ++r) {
      pooled([&] {
        const double t0 = mach_seconds();
        id<MTLCommandBuffer> cb = [dev_->queue commandBuffer];
        const double t1 = mach_seconds();
        if (!cb) throw DeviceError("[metal::commandBuffer] no command buffer for " + p_->entry);
        encode([cb computeCommandEncoder], bound, work_items, 1);
        const double t2 = mach_seconds();
        [cb commit];
        const double t3 = mach_seconds();
        wait_completed(cb, p_->entry);
        const double t6 = mach_seconds();
        check_completed(cb, "waitUntilCompleted", p_->entry);  // GPUStartTime / GPUEndTime are valid once Completed
        tl.t.push_back({0.0, t1 - t0, t2 - t0, t3 - t0, cb.GPUStartTime - t0, cb.GPUEndTime - t0, t6 - t0});
      });
    }
    return tl;
  }

 private:
  // An argument as bound: a buffer at its index, or a scalar's bytes for setBytes.
  struct Bound {
    id<MTLBuffer> buffer = nil;
    uint64_t bytes = 0;  // the scalar's bits (4 or 8 of them used)
    NSUInteger size = 0;
  };

  // Marshals scalars once: an int as a 64-bit `long`, a float as a 32-bit `float` (MSL has no
  // double), then the work-item count as `ulong`, each at its own [[buffer(i)]].
  std::vector<Bound> bind(const std::vector<Arg>& args, uint64_t work_items) const {
    check_work_items(work_items);
    // dispatchThreads takes the grid as NSUInteger, but the kernels index with a 32-bit
    // thread_position_in_grid: keep the grid below 2^32 threads.
    if (work_items > 0xffffffffull)
      throw std::invalid_argument("launch of " + std::to_string(work_items) +
                                  " work items is out of range (valid: 1 to 4294967295 on Metal)");
    std::vector<Bound> bound(args.size() + 1);
    if (bound.size() > 31)
      throw std::invalid_argument(
          "a Metal kernel takes at most 30 arguments plus the work-item count (buffer indices 0..30)");
    for (size_t i = 0; i < args.size(); ++i) {
      if (auto* b = std::get_if<Buffer*>(&args[i])) {
        if (!*b) throw std::invalid_argument("argument " + std::to_string(i) + " is a null buffer");
        bound[i].buffer = buffer_arg(*b, *dev_, i).buffer();
      } else if (auto* v = std::get_if<int64_t>(&args[i])) {
        std::memcpy(&bound[i].bytes, v, sizeof *v);
        bound[i].size = sizeof(int64_t);
      } else {
        const float f = float(std::get<double>(args[i]));
        std::memcpy(&bound[i].bytes, &f, sizeof f);
        bound[i].size = sizeof(float);
      }
    }
    std::memcpy(&bound.back().bytes, &work_items, sizeof work_items);
    bound.back().size = sizeof(uint64_t);
    return bound;
  }

  // Encodes `batch` dispatches of `work_items` threads into `enc` and ends it.
  void encode(id<MTLComputeCommandEncoder> enc, const std::vector<Bound>& bound, uint64_t work_items,
              uint64_t batch) const {
    if (!enc) throw DeviceError("[metal::computeCommandEncoder] no encoder for " + p_->entry);
    [enc setComputePipelineState:p_->state];
    for (size_t i = 0; i < bound.size(); ++i) {
      if (bound[i].buffer) [enc setBuffer:bound[i].buffer offset:0 atIndex:i];
      else [enc setBytes:&bound[i].bytes length:bound[i].size atIndex:i];
    }
    // The default (serial) dispatch type runs the dispatches of one encoder in order, each after
    // the previous one's writes: back-to-back launches as on a CUDA stream. dispatchThreads: takes
    // a grid that need not be a multiple of the threadgroup size (MTLComputeCommandEncoder.h), with
    // the non-uniform threadgroups every Apple-silicon GPU supports
    // (docs/design/backends.md, "The Metal backend"), so exactly `work_items` threads run.
    const MTLSize grid = MTLSizeMake(NSUInteger(work_items), 1, 1);
    const MTLSize group = MTLSizeMake(p_->threadgroup, 1, 1);
    for (uint64_t b = 0; b < batch; ++b) [enc dispatchThreads:grid threadsPerThreadgroup:group];
    [enc endEncoding];
  }

 private:
  std::shared_ptr<Device> dev_;
  std::shared_ptr<Pipeline> p_;
  mutable std::mutex timer_mutex_;
  std::string timer_;
};

}  // namespace

std::shared_ptr<Kernel> make_compute_kernel(std::shared_ptr<Device> dev, std::shared_ptr<Pipeline> pipeline) {
  return std::make_shared<MetalKernel>(std::move(dev), std::move(pipeline));
}

}  // namespace ar::metal
