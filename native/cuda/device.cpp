#include "device.h"

#include <stdexcept>
#include <string>

#include "core/checks.h"
#include "core/errors.h"
#include "core/waits.h"

namespace ar::cuda {

Device::Device(int index) : index_(index) {
  const DriverApi& d = driver();
  CU_CHECK(d.cuDeviceGet(&dev_, index));
  CU_CHECK(d.cuDevicePrimaryCtxRetain(&ctx_, dev_));
  const char* call = "cuCtxSetCurrent";
  CUresult r = d.cuCtxSetCurrent(ctx_);
  // A blocking stream (CU_STREAM_DEFAULT): it also orders against the legacy default stream, which
  // other libraries sharing the primary context (CuPy, PyTorch) may use on these buffers.
  if (r == CUDA_SUCCESS) {
    call = "cuStreamCreate";
    r = d.cuStreamCreate(&stream_, CU_STREAM_DEFAULT);
  }
  if (r != CUDA_SUCCESS) {
    d.cuDevicePrimaryCtxRelease(dev_);
    check(r, call);
  }
}

Device::~Device() {
  if (abandoned()) {
    // Work is still running: cuBLAS's teardown, the stream's and the context's release could wait
    // for it. They are left to the process's exit (the library state deliberately leaked).
    new std::shared_ptr<void>(std::move(library_state));
    new std::shared_ptr<void>(std::move(clock_probe));
    return;
  }
  const DriverApi& d = driver();
  if (d.cuCtxSetCurrent(ctx_) == CUDA_SUCCESS) library_state.reset();  // cuBLAS needs its context
  if (d.cuCtxSetCurrent(ctx_) == CUDA_SUCCESS && stream_) d.cuStreamDestroy(stream_);
  d.cuDevicePrimaryCtxRelease(dev_);  // never throws: a failure here is ignored
}

int Device::attribute(CUdevice_attribute a) const {
  int v = 0;
  CU_CHECK(driver().cuDeviceGetAttribute(&v, a, dev_));
  return v;
}

void Device::make_current() const { CU_CHECK(driver().cuCtxSetCurrent(ctx_)); }

void Device::sync(const char* after, bool host_timed) const {
  // cuStreamQuery polled through wait_until (core/waits.h), not cuStreamSynchronize: a stream that
  // never finishes ends in DeviceStopped after the thread's bound, and a signal is handled meanwhile.
  // The poll sleeps between queries; only a host-timed wait spins first.
  const DriverApi& d = driver();
  CUresult r = d.cuStreamQuery(stream_);
  if (r == CUDA_ERROR_NOT_READY) {  // (the wait's description is built only when there is a wait)
    try {
      wait_until(
          [&] {
            r = d.cuStreamQuery(stream_);
            return r != CUDA_ERROR_NOT_READY;
          },
          std::string("the CUDA stream after ") + after, host_timed ? kSpinS : 0.0);
    } catch (...) {
      abandoned_.store(true);
      throw;
    }
  }
  if (r != CUDA_SUCCESS) throw DeviceError(std::string("[cuda::cuStreamQuery] after ") + after + ": " + cu_error(r));
}

CudaBuffer::CudaBuffer(std::shared_ptr<Device> dev, size_t nbytes) : dev_(std::move(dev)), nbytes_(nbytes) {
  const DriverApi& d = driver();
  dev_->make_current();
  CUresult r = d.cuMemAlloc(&ptr_, nbytes_);
  if (r != CUDA_SUCCESS)
    throw DeviceError("[cuda::cuMemAlloc] " + cu_error(r) + " (allocating " + std::to_string(nbytes_) + " bytes)");
  r = d.cuMemsetD8Async(ptr_, 0, nbytes_, dev_->stream());
  if (r != CUDA_SUCCESS) {
    d.cuMemFree(ptr_);
    check(r, "cuMemsetD8Async");
  }
  try {
    dev_->sync("cuMemsetD8Async");
  } catch (...) {
    d.cuMemFree(ptr_);
    throw;
  }
}

CudaBuffer::~CudaBuffer() {
  if (dev_->abandoned()) return;  // cuMemFree could wait for the work still running (Device::abandoned)
  const DriverApi& d = driver();
  try {
    dev_->make_current();
  } catch (...) {
    return;  // the context is gone; the driver reclaims the memory with it
  }
  d.cuMemFree(ptr_);
}

void CudaBuffer::write(const void* src, size_t n, size_t offset) {
  check_range(n, offset, nbytes_, "write");
  if (!n) return;
  dev_->make_current();
  CU_CHECK(driver().cuMemcpyHtoDAsync(ptr_ + offset, src, n, dev_->stream()));
  dev_->sync("cuMemcpyHtoDAsync");
}

void CudaBuffer::read(void* dst, size_t n, size_t offset) const {
  check_range(n, offset, nbytes_, "read");
  if (!n) return;
  dev_->make_current();
  CU_CHECK(driver().cuMemcpyDtoHAsync(dst, ptr_ + offset, n, dev_->stream()));
  dev_->sync("cuMemcpyDtoHAsync");
}

// cuda.h: cuMemsetD32Async sets N 32-bit values at a 4-byte-aligned device pointer, on the stream;
// the wait after it keeps write()'s contract (done when the call returns).
void CudaBuffer::fill32(uint32_t value, size_t n, size_t offset) {
  check_fill32(n, offset, nbytes_);
  if (!n) return;
  dev_->make_current();
  CU_CHECK(driver().cuMemsetD32Async(ptr_ + offset, value, n / 4, dev_->stream()));
  dev_->sync("cuMemsetD32Async");
}

Buffer::Address CudaBuffer::address() {
  dev_->make_current();
  dev_->sync("the launches before a DLPack export");
  return {reinterpret_cast<void*>(ptr_), Address::kCUDA, dev_->index()};
}

SampleEvents::SampleEvents(const Device& dev, size_t samples) : dev_(dev) {
  const DriverApi& d = driver();
  start_.reserve(samples);
  stop_.reserve(samples);
  for (size_t i = 0; i < samples; ++i) {
    CUevent a = nullptr, b = nullptr;
    CU_CHECK(d.cuEventCreate(&a, CU_EVENT_DEFAULT));
    start_.push_back(a);
    CU_CHECK(d.cuEventCreate(&b, CU_EVENT_DEFAULT));
    stop_.push_back(b);
  }
}

SampleEvents::~SampleEvents() {
  const DriverApi& d = driver();
  for (CUevent e : start_) d.cuEventDestroy(e);
  for (CUevent e : stop_) d.cuEventDestroy(e);
}

void SampleEvents::start(size_t i) { CU_CHECK(driver().cuEventRecord(start_[i], dev_.stream())); }
void SampleEvents::stop(size_t i) { CU_CHECK(driver().cuEventRecord(stop_[i], dev_.stream())); }

std::vector<double> SampleEvents::elapsed(const char* what) {
  const DriverApi& d = driver();
  dev_.sync(what);
  std::vector<double> out;
  out.reserve(start_.size());
  for (size_t i = 0; i < start_.size(); ++i) {
    float ms = 0.0f;
    CU_CHECK(d.cuEventElapsedTime(&ms, start_[i], stop_[i]));
    out.push_back(double(ms) * 1e-3);
  }
  return out;
}

}  // namespace ar::cuda
