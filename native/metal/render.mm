// Render passes of the graphics study on Metal (core/backend.h, RenderSpec; docs/design/graphics.md, "The
// graphics study"): a render pipeline from the Compiler's vertex and fragment functions, a
// private-storage target cleared to zero, one instanced draw of a fullscreen triangle per pass, the
// texture uploaded once through a blit; `batch` passes per command buffer, timed by run_samples on
// the command buffers' GPUEndTime - GPUStartTime. Every Metal failure becomes an exception naming
// the call.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "metal.h"

namespace ar::metal {
namespace {

// The WebGPU format names of core/backend.h as Metal pixel formats (MTLPixelFormat.h).
MTLPixelFormat pixel_format(const std::string& format) {
  if (format == "r8unorm") return MTLPixelFormatR8Unorm;
  if (format == "rgba8unorm") return MTLPixelFormatRGBA8Unorm;
  if (format == "rgba16float") return MTLPixelFormatRGBA16Float;
  if (format == "rgba32float") return MTLPixelFormatRGBA32Float;
  render_format_bytes(format);  // throws std::invalid_argument naming the valid formats
  throw std::invalid_argument("render-target format '" + format + "' has no Metal pixel format");
}

// A private-storage 2D texture (no mipmaps) or DeviceError naming the call.
id<MTLTexture> private_texture(id<MTLDevice> device, MTLPixelFormat format, uint32_t width, uint32_t height,
                               MTLTextureUsage usage, const char* what) {
  MTLTextureDescriptor* d = [MTLTextureDescriptor texture2DDescriptorWithPixelFormat:format
                                                                               width:width
                                                                              height:height
                                                                           mipmapped:NO];
  d.storageMode = MTLStorageModePrivate;
  d.usage = usage;
  id<MTLTexture> t = [device newTextureWithDescriptor:d];
  if (!t)
    throw DeviceError(std::string("[metal::newTextureWithDescriptor] could not create the ") + what + " (" +
                      std::to_string(width) + " x " + std::to_string(height) + "; out of memory?)");
  return t;
}

// The statistic counter set, where it has MTLCommonCounterFragmentInvocations and the device samples
// at stage boundaries (MTLCounters.h, MTLDevice.h); nil otherwise. Apple GPUs sample only timestamps
// at stage boundaries (docs/design/backends.md, "The Metal backend"), so there this is nil.
id<MTLCounterSet> fragment_statistics(id<MTLDevice> d) {
  if (![d supportsCounterSampling:MTLCounterSamplingPointAtStageBoundary]) return nil;
  for (id<MTLCounterSet> set in d.counterSets) {
    if (![set.name isEqualToString:MTLCommonCounterSetStatistic]) continue;
    for (id<MTLCounter> c in set.counters)
      if ([c.name isEqualToString:MTLCommonCounterFragmentInvocations]) return set;
  }
  return nil;
}

class MetalRenderPass final : public RenderPass {
 public:
  MetalRenderPass(std::shared_ptr<Device> dev, Compiler& compiler, const RenderSpec& spec)
      : dev_(std::move(dev)),
        name_(spec.fragment),
        width_(spec.width),
        height_(spec.height),
        instances_(spec.instances),
        bpp_(render_format_bytes(spec.format)),
        store_(spec.store),
        uniforms_(spec.uniforms) {
    check_render_spec(spec);
    const MTLPixelFormat format = pixel_format(spec.format);
    pooled([&] {
      id<MTLDevice> device = dev_->device;
      id<MTLFunction> vs = compiler.function(spec.source, spec.vertex, {}, MTLFunctionTypeVertex);
      id<MTLFunction> fs = compiler.function(spec.source, spec.fragment, spec.constants, MTLFunctionTypeFragment);
      MTLRenderPipelineDescriptor* d = [MTLRenderPipelineDescriptor new];
      d.vertexFunction = vs;
      d.fragmentFunction = fs;
      MTLRenderPipelineColorAttachmentDescriptor* colour = d.colorAttachments[0];
      colour.pixelFormat = format;
      if (spec.blend_max) {
        // result = max(source, destination) per channel: MTLBlendOperationMax ignores the factors
        // (MTLRenderPipeline.h), set to one as in WebGPU's blend state of the wgpu twin.
        colour.blendingEnabled = YES;
        colour.rgbBlendOperation = MTLBlendOperationMax;
        colour.alphaBlendOperation = MTLBlendOperationMax;
        colour.sourceRGBBlendFactor = MTLBlendFactorOne;
        colour.destinationRGBBlendFactor = MTLBlendFactorOne;
        colour.sourceAlphaBlendFactor = MTLBlendFactorOne;
        colour.destinationAlphaBlendFactor = MTLBlendFactorOne;
      }
      NSError* err = nil;
      state_ = [device newRenderPipelineStateWithDescriptor:d error:&err];
      if (!state_) {
        const std::string why = "[metal::newRenderPipelineStateWithDescriptor] " + spec.vertex + " + " + spec.fragment +
                                " into " + spec.format + (spec.blend_max ? " with blending" : "") + ": " +
                                describe(err);
        // Blending a 32-bit float target is not supported by every GPU (Apple's feature set tables).
        if (spec.blend_max && format == MTLPixelFormatRGBA32Float) throw UnsupportedError(why);
        throw CompileError(why, err ? std::string(err.localizedDescription.UTF8String) : "");
      }
      // Blit copies out of the target need no usage flag (MTLTexture.h's MTLTextureUsage lists
      // shader read, shader write, render target and pixel-format views only).
      target_ = private_texture(device, format, width_, height_, MTLTextureUsageRenderTarget, "render target");
      if (!spec.texture.empty()) upload(spec);
      statistics_ = fragment_statistics(device);
    });
  }

  std::string timer() const override {
    std::lock_guard<std::mutex> lock(timer_mutex_);
    return timer_;
  }

  std::vector<double> time(uint64_t batch, uint64_t reps) override {
    if (batch == 0) throw std::invalid_argument("batch must be at least 1 render pass per sample");
    if (reps == 0) throw std::invalid_argument("reps must be at least 1 sample");
    const Encode encode = [&](id<MTLCommandBuffer> cb, MTLComputePassDescriptor*) {
      MTLRenderPassDescriptor* rp = pass_descriptor(store_);
      for (uint64_t b = 0; b < batch; ++b) draw(cb, rp);
    };
    std::string how;
    // counters off: the pass boundaries of `batch` render passes are not one encoder's, and the
    // command buffer holds nothing else (run_samples: GPUEndTime - GPUStartTime).
    std::vector<double> out = run_samples(*dev_, reps, false, encode, name_.c_str(), &how);
    {
      std::lock_guard<std::mutex> lock(timer_mutex_);
      timer_ = how;
    }
    return out;
  }

  std::vector<uint8_t> read() override {
    const size_t row = size_t(width_) * bpp_, bytes = row * height_;
    std::vector<uint8_t> out(bytes);
    pooled([&] {
      id<MTLBuffer> staging = [dev_->device newBufferWithLength:bytes options:MTLResourceStorageModeShared];
      if (!staging)
        throw DeviceError("[metal::newBufferWithLength] could not allocate " + std::to_string(bytes) +
                          " bytes to read the render target back");
      run_once(
          *dev_,
          [&](id<MTLCommandBuffer> cb) {
            draw(cb, pass_descriptor(true));
            id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
            if (!blit) throw DeviceError("[metal::blitCommandEncoder] no encoder to read " + name_ + "'s target");
            [blit copyFromTexture:target_
                             sourceSlice:0
                             sourceLevel:0
                            sourceOrigin:MTLOriginMake(0, 0, 0)
                              sourceSize:MTLSizeMake(width_, height_, 1)
                                toBuffer:staging
                       destinationOffset:0
                  destinationBytesPerRow:row
                destinationBytesPerImage:bytes];
            [blit endEncoding];
          },
          name_.c_str());
      // Shared storage is coherent at command-buffer boundaries (MTLResource.h); run_once waited.
      std::memcpy(out.data(), [staging contents], bytes);
    });
    return out;
  }

  int64_t fragment_invocations() override {
    if (!statistics_) return -1;
    int64_t count = -1;
    pooled([&] {
      MTLCounterSampleBufferDescriptor* d = [MTLCounterSampleBufferDescriptor new];
      d.counterSet = statistics_;
      d.storageMode = MTLStorageModeShared;  // MTLCounters.h: resolveCounterRange: needs shared storage
      d.sampleCount = 2;
      NSError* err = nil;
      id<MTLCounterSampleBuffer> samples = [dev_->device newCounterSampleBufferWithDescriptor:d error:&err];
      if (!samples) return;  // count stays -1
      run_once(
          *dev_,
          [&](id<MTLCommandBuffer> cb) {
            MTLRenderPassDescriptor* rp = pass_descriptor(true);
            // Only the fragment stage's boundaries; MTLRenderPass.h: an index the device cannot
            // sample must be MTLCounterDontSample.
            MTLRenderPassSampleBufferAttachmentDescriptor* a = rp.sampleBufferAttachments[0];
            a.sampleBuffer = samples;
            a.startOfVertexSampleIndex = MTLCounterDontSample;
            a.endOfVertexSampleIndex = MTLCounterDontSample;
            a.startOfFragmentSampleIndex = 0;
            a.endOfFragmentSampleIndex = 1;
            draw(cb, rp);
          },
          name_.c_str());
      NSData* data = [samples resolveCounterRange:NSMakeRange(0, 2)];
      if (data && data.length >= 2 * sizeof(MTLCounterResultStatistic)) {
        const auto* s = static_cast<const MTLCounterResultStatistic*>(data.bytes);
        const uint64_t start = s[0].fragmentInvocations, end = s[1].fragmentInvocations;
        // MTLCounters.h: a sample that failed to resolve reads MTLCounterErrorValue.
        if (start != MTLCounterErrorValue && end != MTLCounterErrorValue && end >= start) count = int64_t(end - start);
      }
    });
    return count;
  }

 private:
  // Clear to (0,0,0,0); store action Store, or DontCare (the image is not kept).
  MTLRenderPassDescriptor* pass_descriptor(bool store) const {
    MTLRenderPassDescriptor* rp = [MTLRenderPassDescriptor renderPassDescriptor];
    MTLRenderPassColorAttachmentDescriptor* a = rp.colorAttachments[0];
    a.texture = target_;
    a.loadAction = MTLLoadActionClear;
    a.clearColor = MTLClearColorMake(0.0, 0.0, 0.0, 0.0);
    a.storeAction = store ? MTLStoreActionStore : MTLStoreActionDontCare;
    return rp;
  }

  // One render pass: the pipeline, the fragment bindings, one instanced draw of three vertices.
  void draw(id<MTLCommandBuffer> cb, MTLRenderPassDescriptor* rp) const {
    id<MTLRenderCommandEncoder> enc = [cb renderCommandEncoderWithDescriptor:rp];
    if (!enc) throw DeviceError("[metal::renderCommandEncoderWithDescriptor] no encoder for " + name_);
    [enc setRenderPipelineState:state_];
    // setFragmentBytes copies the bytes (MTLRenderCommandEncoder.h); check_render_spec keeps them
    // within the 4 KiB such inline data is meant for.
    if (!uniforms_.empty())
      [enc setFragmentBytes:uniforms_.data() length:uniforms_.size() * sizeof(uint32_t) atIndex:0];
    if (texture_) {
      [enc setFragmentTexture:texture_ atIndex:0];
      [enc setFragmentSamplerState:sampler_ atIndex:0];
    }
    [enc drawPrimitives:MTLPrimitiveTypeTriangle vertexStart:0 vertexCount:3 instanceCount:instances_];
    [enc endEncoding];
  }

  // The RGBA8 texture, uploaded once through a shared buffer and a blit, and its sampler.
  void upload(const RenderSpec& spec) {
    id<MTLDevice> device = dev_->device;
    const uint32_t s = spec.texture_size;
    const size_t row = size_t(s) * 4, bytes = row * s;
    id<MTLBuffer> staging = [device newBufferWithBytes:spec.texture.data()
                                                length:bytes
                                               options:MTLResourceStorageModeShared];
    if (!staging)
      throw DeviceError("[metal::newBufferWithBytes] could not allocate " + std::to_string(bytes) + " bytes of texels");
    texture_ = private_texture(device, MTLPixelFormatRGBA8Unorm, s, s, MTLTextureUsageShaderRead, "texture");
    run_once(
        *dev_,
        [&](id<MTLCommandBuffer> cb) {
          id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
          if (!blit) throw DeviceError("[metal::blitCommandEncoder] no encoder to upload the texture");
          [blit copyFromBuffer:staging
                     sourceOffset:0
                sourceBytesPerRow:row
              sourceBytesPerImage:bytes
                       sourceSize:MTLSizeMake(s, s, 1)
                        toTexture:texture_
                 destinationSlice:0
                 destinationLevel:0
                destinationOrigin:MTLOriginMake(0, 0, 0)];
          [blit endEncoding];
        },
        "texture upload");
    MTLSamplerDescriptor* sd = [MTLSamplerDescriptor new];
    const MTLSamplerMinMagFilter filter = spec.linear ? MTLSamplerMinMagFilterLinear : MTLSamplerMinMagFilterNearest;
    sd.minFilter = filter;
    sd.magFilter = filter;
    sd.mipFilter = MTLSamplerMipFilterNotMipmapped;  // level 0 only (MTLSampler.h)
    sd.sAddressMode = MTLSamplerAddressModeRepeat;
    sd.tAddressMode = MTLSamplerAddressModeRepeat;
    sd.normalizedCoordinates = YES;
    sampler_ = [device newSamplerStateWithDescriptor:sd];
    if (!sampler_) throw DeviceError("[metal::newSamplerStateWithDescriptor] could not create the sampler");
  }

  std::shared_ptr<Device> dev_;
  std::string name_;  // the fragment function, naming the pass in errors
  uint32_t width_, height_, instances_;
  size_t bpp_;
  bool store_;
  std::vector<uint32_t> uniforms_;
  id<MTLRenderPipelineState> state_ = nil;
  id<MTLTexture> target_ = nil;
  id<MTLTexture> texture_ = nil;
  id<MTLSamplerState> sampler_ = nil;
  id<MTLCounterSet> statistics_ = nil;
  mutable std::mutex timer_mutex_;
  std::string timer_;
};

}  // namespace

std::shared_ptr<RenderPass> make_render_pass(std::shared_ptr<Device> dev, Compiler& compiler, const RenderSpec& spec) {
  return std::make_shared<MetalRenderPass>(std::move(dev), compiler, spec);
}

}  // namespace ar::metal
