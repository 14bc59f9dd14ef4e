// GEMM on the Apple GPU through MetalPerformanceShaders: MPSMatrixMultiplication in fp32 and fp16,
// C = A·B row-major, no transpose, alpha 1, beta 0 (core/backend.h), `batch` encodes per command
// buffer. MPS encodes its own compute passes, so samples are timed by the command buffer
// (GPUEndTime - GPUStartTime), not by counter sample buffers.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#import <MetalPerformanceShaders/MetalPerformanceShaders.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "metal.h"

namespace ar::metal {
namespace {

class MpsGemm final : public Kernel {
 public:
  MpsGemm(std::shared_ptr<Device> dev, std::string dtype, NSUInteger m, NSUInteger n, NSUInteger k)
      : dev_(std::move(dev)), dtype_(std::move(dtype)), m_(m), n_(n), k_(k) {
    pooled([&] {
      // MPSMatrixMultiplication.h: "unit scaling of the product, and no accumulation of the
      // result. The scaling factors alpha and beta are taken to be 1.0 and 0.0".
      mm_ = [[MPSMatrixMultiplication alloc] initWithDevice:dev_->device
                                                 resultRows:m_
                                              resultColumns:n_
                                            interiorColumns:k_];
    });
    if (!mm_) throw DeviceError("[metal::MPSMatrixMultiplication] could not create a " + dtype_ + " GEMM");
  }
  std::string entry() const override { return dtype_ == "fp32" ? "sgemm" : "hgemm"; }
  std::string timer() const override { return "command buffer GPUEndTime - GPUStartTime (MPS encodes its own passes)"; }

  std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                           bool /*clock: Metal measures none per sample*/) override {
    if (batch == 0 || reps == 0) throw std::invalid_argument("batch and reps must be at least 1");
    Matrices m = bind(args, work_items);
    MPSMatrixMultiplication* mm = mm_;
    const Encode encode = [&](id<MTLCommandBuffer> cb, MTLComputePassDescriptor*) {
      for (uint64_t b = 0; b < batch; ++b)
        [mm encodeToCommandBuffer:cb leftMatrix:m.mats[0] rightMatrix:m.mats[1] resultMatrix:m.mats[2]];
    };
    return run_samples(*dev_, reps, false, encode, dtype_ == "fp32" ? "MPS sgemm" : "MPS hgemm", nullptr);
  }

  // One product in its own command buffer, committed and left running (commit_launch):
  // Backend::synchronize waits for it. The per-call cost study's round trip (docs/design/studies.md,
  // "The per-call cost study").
  void launch(const std::vector<Arg>& args, uint64_t work_items) override {
    Matrices m = bind(args, work_items);
    MPSMatrixMultiplication* mm = mm_;
    commit_launch(
        *dev_,
        [&](id<MTLCommandBuffer> cb) {
          [mm encodeToCommandBuffer:cb leftMatrix:m.mats[0] rightMatrix:m.mats[1] resultMatrix:m.mats[2]];
        },
        dtype_ == "fp32" ? "MPS sgemm" : "MPS hgemm");
  }

 private:
  struct Matrices {
    MPSMatrix* mats[3];
  };

  // The three buffers checked (A m×k, B k×n, C m×n) and wrapped as row-major MPSMatrix objects.
  Matrices bind(const std::vector<Arg>& args, uint64_t work_items) {
    check_gemm_launch(work_items);
    if (args.size() != 3)
      throw std::invalid_argument("gemm takes 3 buffers (A, B, C), got " + std::to_string(args.size()));
    const MPSDataType type = dtype_ == "fp32" ? MPSDataTypeFloat32 : MPSDataTypeFloat16;
    const NSUInteger es = dtype_ == "fp32" ? 4 : 2;
    const NSUInteger rows[3] = {m_, k_, m_}, cols[3] = {k_, n_, n_};
    id<MTLBuffer> bufs[3];
    for (size_t i = 0; i < 3; ++i) {
      Buffer* const* b = std::get_if<Buffer*>(&args[i]);
      if (!b || !*b) throw std::invalid_argument("gemm: argument " + std::to_string(i) + " must be a Buffer");
      MetalBuffer& mb = buffer_arg(*b, *dev_, i);
      const size_t need = size_t(rows[i]) * cols[i] * es;
      if (mb.nbytes() < need)
        throw std::invalid_argument("gemm: buffer " + std::string(1, "ABC"[i]) + " holds " +
                                    std::to_string(mb.nbytes()) + " bytes, needs " + std::to_string(need));
      bufs[i] = mb.buffer();
    }
    // The wrappers of the last three buffers are kept (strongly, so an address cannot be reused by
    // another buffer while cached): a per-call round trip then times the product, not three
    // descriptor and MPSMatrix allocations per call.
    std::lock_guard<std::mutex> lock(bound_mu_);
    if (bound_[0] == bufs[0] && bound_[1] == bufs[1] && bound_[2] == bufs[2]) return bound_mats_;
    Matrices m;
    pooled([&] {
      for (size_t i = 0; i < 3; ++i) {
        // Row-major, densely packed rows (rowBytes = columns × element size).
        MPSMatrixDescriptor* d = [MPSMatrixDescriptor matrixDescriptorWithRows:rows[i]
                                                                       columns:cols[i]
                                                                      rowBytes:cols[i] * es
                                                                      dataType:type];
        m.mats[i] = [[MPSMatrix alloc] initWithBuffer:bufs[i] descriptor:d];
      }
    });
    for (size_t i = 0; i < 3; ++i) bound_[i] = bufs[i];
    bound_mats_ = m;
    return m;
  }

  std::shared_ptr<Device> dev_;
  std::string dtype_;
  NSUInteger m_, n_, k_;
  MPSMatrixMultiplication* mm_ = nil;
  std::mutex bound_mu_;
  id<MTLBuffer> bound_[3] = {nil, nil, nil};
  Matrices bound_mats_ = {};
};

}  // namespace

std::shared_ptr<Kernel> make_mps_gemm(std::shared_ptr<Device> dev, const std::string& dtype, int64_t m, int64_t n,
                                      int64_t k) {
  if (dtype != "fp32" && dtype != "fp16")
    throw UnsupportedError("[metal::gemm] MPS GEMM in " + dtype +
                           " is not available on the Metal backend (valid: fp32, fp16)");
  const int64_t lim = int64_t(1) << 20;
  for (int64_t d : {m, n, k})
    if (d < 1 || d > lim)
      throw std::invalid_argument("GEMM dimension " + std::to_string(d) + " is out of range (valid: 1 to 1048576)");
  if (!MPSSupportsMTLDevice(dev->device))
    throw UnsupportedError("[metal::gemm] MetalPerformanceShaders does not support this device");
  return std::make_shared<MpsGemm>(std::move(dev), dtype, NSUInteger(m), NSUInteger(n), NSUInteger(k));
}

}  // namespace ar::metal
