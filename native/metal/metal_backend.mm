// The Metal backend (docs/design/backends.md, "The Metal backend"): a Metal device and one command queue,
// shared-storage buffers exposed without a copy, MSL compiled at run time and cached, one command
// buffer per sample timed on the GPU, MPS GEMM, the graphics study's render passes. Every Metal failure becomes an
// exception naming the call.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "metal.h"

namespace ar {

namespace metal {
namespace {

// The timestamp counter set, where the device samples it at stage boundaries (MTLDevice.h,
// MTLCounterSamplingPointAtStageBoundary): the only sampling point Apple GPUs support
// (docs/design/backends.md, "The Metal backend"), and enough to bracket one compute pass.
id<MTLCounterSet> timestamp_counters(id<MTLDevice> d) {
  if (![d supportsCounterSampling:MTLCounterSamplingPointAtStageBoundary]) return nil;
  for (id<MTLCounterSet> set in d.counterSets)
    if ([set.name isEqualToString:MTLCommonCounterSetTimestamp]) return set;
  return nil;
}

class MetalBackend final : public Backend {
 public:
  explicit MetalBackend(int index) : dev_(std::make_shared<Device>()) {
    pooled([&] {
      NSArray<id<MTLDevice>>* devices = all_devices();
      if (index >= int(devices.count))
        throw DeviceError("[metal] no device " + std::to_string(index) + " (" + std::to_string(long(devices.count)) +
                          " Metal device(s))");
      dev_->device = devices[NSUInteger(index)];
      dev_->index = index;
      // MTLDevice.h: newCommandQueue allows "up to 64 non-completed command buffers", fewer than
      // the dispatch study launches before it synchronizes: the queue is sized for them
      // (metal_rules::kQueueDepth), and commit_launch never waits on it while holding the mutex.
      dev_->queue = [dev_->device newCommandQueueWithMaxCommandBufferCount:metal_rules::kQueueDepth];
      if (!dev_->queue)
        throw DeviceError("[metal::newCommandQueueWithMaxCommandBufferCount] could not create a command queue");
      dev_->timestamps = timestamp_counters(dev_->device);
    });
    compiler_ = std::make_unique<Compiler>(dev_);
  }

  Info info() const override { return device_info(*dev_); }

  std::shared_ptr<Buffer> alloc(size_t nbytes) override { return std::make_shared<MetalBuffer>(dev_, nbytes); }

  std::shared_ptr<Kernel> compile(const std::string& source, const std::string& entry,
                                  const Constants& constants) override {
    // The compiler caches the pipeline; the Kernel around it is a light handle.
    return make_compute_kernel(dev_, compiler_->pipeline(source, entry, constants));
  }

  std::shared_ptr<Kernel> gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k) override {
    return make_mps_gemm(dev_, dtype, m, n, k);
  }

  std::shared_ptr<RenderPass> render_pass(const RenderSpec& spec) override {
    return make_render_pass(dev_, *compiler_, spec);
  }

  // time() waits for its own command buffers; Kernel::launch leaves its last one to wait for here.
  void synchronize() override { synchronize_launches(*dev_); }

 private:
  std::shared_ptr<Device> dev_;
  std::unique_ptr<Compiler> compiler_;
};

}  // namespace
}  // namespace metal

BackendStatus metal_status() {
  int n = 0;
  metal::pooled([&] { n = int(metal::all_devices().count); });
  return {"metal", true, n, n ? "" : "no Metal device (MTLCreateSystemDefaultDevice returned nil)"};
}

std::shared_ptr<Backend> make_metal_backend(int index) { return std::make_shared<metal::MetalBackend>(index); }

}  // namespace ar
