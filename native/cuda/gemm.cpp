// cuBLAS GEMM for the gemm suite: row-major C[m×n] = A[m×k]·B[k×n], alpha 1, beta 0, timed with
// CUDA events around each sample's batch on the backend's stream.
//
// cuBLAS is column-major; a row-major matrix is its transpose in column-major order, so the
// row-major product C = A·B is computed as the column-major Cᵀ = Bᵀ·Aᵀ: cublasGemmEx(N, N, n, m, k,
// B, ldb = n, A, lda = k, C, ldc = n). No data is transposed.
//
// INT8 is the exception: cuBLAS runs integer GEMMs on the tensor cores only in the "TN" layout
// (the first operand transposed), so for "int8" B is passed already transposed, n×k row-major
// (each column of B contiguous), as torch._int_mm also takes it: cublasGemmEx(T, N, n, m, k,
// Bᵀ, lda = k, A, ldb = k, C, ldc = n). With B k×n (NN) cuBLAS 13 falls back to a kernel that
// reached 130 TOPS on an H100 against its 1979 TOPS dense peak.
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "device.h"

namespace ar::cuda {

namespace {

// The handle and its workspace, one per device (Device::library_state).
struct CublasState {
  cublasHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;
  std::mutex mutex;  // a handle must not be used by two threads at once
  ~CublasState() {
    const CublasApi* c = cublas_api(nullptr);
    if (handle && c) c->cublasDestroy_v2(handle);
    if (workspace) driver().cuMemFree(workspace);
  }
};

// 32 MiB: what PyTorch gives cuBLAS on Hopper (CUBLAS_WORKSPACE_CONFIG default ":4096:8"), so the
// library may pick the same algorithms for both.
constexpr size_t kWorkspaceBytes = 32u << 20;

std::shared_ptr<CublasState> state_for(const std::shared_ptr<Device>& dev) {
  std::lock_guard<std::mutex> lock(dev->library_mutex);
  if (dev->library_state) return std::static_pointer_cast<CublasState>(dev->library_state);
  const CublasApi& c = cublas();
  dev->make_current();
  auto s = std::make_shared<CublasState>();
  CUBLAS_CHECK(c.cublasCreate_v2(&s->handle));
  CUBLAS_CHECK(c.cublasSetStream_v2(s->handle, dev->stream()));
  CU_CHECK(driver().cuMemAlloc(&s->workspace, kWorkspaceBytes));
  CUBLAS_CHECK(c.cublasSetWorkspace_v2(s->handle, reinterpret_cast<void*>(s->workspace), kWorkspaceBytes));
  // CUBLAS_DEFAULT_MATH: FP32 GEMM stays FP32 (TF32 only where the compute type asks for it), and
  // FP16/BF16 may use reduced-precision split-K reductions, as PyTorch allows by default.
  CUBLAS_CHECK(c.cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH));
  dev->library_state = s;
  return s;
}

struct Precision {
  const char* name;
  cudaDataType in, out;
  size_t in_size, out_size;
  cublasComputeType_t compute;
  int scalar;         // 0: float alpha/beta, 1: double, 2: int32
  bool b_transposed;  // B given n×k (see the top of this file)
};

const Precision kPrecisions[] = {
    {"fp64", CUDA_R_64F, CUDA_R_64F, 8, 8, CUBLAS_COMPUTE_64F, 1, false},
    {"fp32", CUDA_R_32F, CUDA_R_32F, 4, 4, CUBLAS_COMPUTE_32F, 0, false},
    {"tf32", CUDA_R_32F, CUDA_R_32F, 4, 4, CUBLAS_COMPUTE_32F_FAST_TF32, 0, false},
    {"fp16", CUDA_R_16F, CUDA_R_16F, 2, 2, CUBLAS_COMPUTE_32F, 0, false},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2, CUBLAS_COMPUTE_32F, 0, false},
    {"int8", CUDA_R_8I, CUDA_R_32I, 1, 4, CUBLAS_COMPUTE_32I, 2, true},
};

class CublasGemm final : public Kernel {
 public:
  CublasGemm(std::shared_ptr<Device> dev, std::shared_ptr<CublasState> st, const Precision& p, int m, int n, int k)
      : dev_(std::move(dev)),
        st_(std::move(st)),
        p_(p),
        m_(m),
        n_(n),
        k_(k),
        call_(std::string("cublasGemmEx ") + p.name),
        probe_(clock_probe_for(dev_)) {}

  std::string entry() const override { return std::string("cublasGemmEx_") + p_.name; }

  std::vector<double> time(const std::vector<Arg>& args, uint64_t /*work_items*/, uint64_t batch, uint64_t reps,
                           bool clock) override {
    const Operands o = bind(args);
    std::lock_guard<std::mutex> lock(st_->mutex);
    dev_->make_current();
    // The clock: a probe kernel before and after each probed sample, outside its events (device.h, ClockProbe).
    ClockProbe* probe = clock && probe_->reason().empty() ? probe_.get() : nullptr;
    // Two probed launches per probed sample, each in its own slot: one before, one after.
    if (probe) probe->slots().begin(*dev_, reps, 2);
    SampleEvents ev(*dev_, size_t(reps));
    for (uint64_t r = 0; r < reps; ++r) {
      const bool probed = probe && probe->slots().probed(r);
      if (probed) {
        probe->slots().point(*dev_, probe->slots().slot(r, 0));
        probe->run();
      }
      ev.start(size_t(r));
      for (uint64_t i = 0; i < batch; ++i) enqueue(o);
      ev.stop(size_t(r));
      if (probed) {
        probe->slots().point(*dev_, probe->slots().slot(r, 1));
        probe->run();
      }
    }
    std::vector<double> out = ev.elapsed("cublasGemmEx");
    clock_ = probe ? probe->slots().reading(*dev_) : ClockReading{{}, clock ? probe_->reason() : kClockNotAsked};
    return out;
  }

  ClockReading clock() const override { return clock_; }

  // One cublasGemmEx enqueued on the backend's stream, not waited for: Backend::synchronize waits.
  // The per-call cost study's round trip (docs/design/studies.md, "The per-call cost study").
  void launch(const std::vector<Arg>& args, uint64_t work_items) override {
    check_gemm_launch(work_items);
    const Operands o = bind(args);
    std::lock_guard<std::mutex> lock(st_->mutex);
    dev_->make_current();
    enqueue(o);
  }

 private:
  struct Operands {
    CUdeviceptr ptr[3];
  };

  // The three buffers checked (A m×k, B k×n or n×k, C m×n) and their device pointers.
  Operands bind(const std::vector<Arg>& args) const {
    if (args.size() != 3)
      throw std::invalid_argument("a GEMM takes 3 arguments (A, B, C), got " + std::to_string(args.size()));
    Operands o;
    const size_t need[3] = {size_t(m_) * size_t(k_) * p_.in_size, size_t(k_) * size_t(n_) * p_.in_size,
                            size_t(m_) * size_t(n_) * p_.out_size};
    for (size_t i = 0; i < 3; ++i) {
      Buffer* const* b = std::get_if<Buffer*>(&args[i]);
      if (!b) throw std::invalid_argument("GEMM argument " + std::to_string(i) + " must be a Buffer");
      CudaBuffer& cb = buffer_arg(*b, *dev_, i);
      if (cb.nbytes() < need[i])
        throw std::invalid_argument("GEMM argument " + std::string(1, "ABC"[i]) + " has " +
                                    std::to_string(cb.nbytes()) + " bytes; " + std::to_string(need[i]) + " needed");
      o.ptr[i] = cb.ptr();
    }
    return o;
  }

  // One cublasGemmEx on the handle's stream; called with st_->mutex held and the context current.
  void enqueue(const Operands& o) {
    float f1 = 1.0f, f0 = 0.0f;
    double d1 = 1.0, d0 = 0.0;
    int32_t i1 = 1, i0 = 0;
    const void* alpha = p_.scalar == 1   ? static_cast<const void*>(&d1)
                        : p_.scalar == 2 ? static_cast<const void*>(&i1)
                                         : &f1;
    const void* beta = p_.scalar == 1   ? static_cast<const void*>(&d0)
                       : p_.scalar == 2 ? static_cast<const void*>(&i0)
                                        : &f0;
    const CUdeviceptr* ptr = o.ptr;
    check_cublas(
        cublas().cublasGemmEx(st_->handle, p_.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n_, m_, k_, alpha,
                              reinterpret_cast<const void*>(ptr[1]), p_.in, p_.b_transposed ? k_ : n_,
                              reinterpret_cast<const void*>(ptr[0]), p_.in, k_, beta, reinterpret_cast<void*>(ptr[2]),
                              p_.out, n_, p_.compute, CUBLAS_GEMM_DEFAULT),
        call_.c_str());
  }

  std::shared_ptr<Device> dev_;
  std::shared_ptr<CublasState> st_;
  const Precision& p_;
  int m_, n_, k_;
  const std::string call_;  // check_cublas's name for the call, built once: enqueue() runs inside timed loops
  std::shared_ptr<ClockProbe> probe_;  // the device's, shared by its GEMMs (used under st_->mutex)
  ClockReading clock_;
};

}  // namespace

std::string cublas_version(std::string* why) {
  const CublasApi* c = cublas_api(why);
  if (!c) return "";
  int v[3] = {0, 0, 0};
  const libraryPropertyType props[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i)
    if (c->cublasGetProperty(props[i], &v[i]) != CUBLAS_STATUS_SUCCESS) {
      if (why) *why = "cublasGetProperty failed";
      return "";
    }
  return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
}

std::shared_ptr<Kernel> make_cublas_gemm(std::shared_ptr<Device> dev, const std::string& dtype, int64_t m, int64_t n,
                                         int64_t k) {
  const Precision* p = nullptr;
  for (const Precision& q : kPrecisions)
    if (dtype == q.name) p = &q;
  if (!p)
    throw std::invalid_argument("unknown GEMM precision '" + dtype + "' (valid: fp64, fp32, tf32, fp16, bf16, int8)");
  for (int64_t d : {m, n, k})
    if (d < 1 || d > INT_MAX)
      throw std::invalid_argument("GEMM dimension " + std::to_string(d) + " is out of range (valid: 1 to 2^31-1)");
  auto st = state_for(dev);
  return std::make_shared<CublasGemm>(std::move(dev), std::move(st), *p, int(m), int(n), int(k));
}

}  // namespace ar::cuda
