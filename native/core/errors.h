// Error types of the native core. Every vendor status becomes one of these at the call site, with
// a "[backend::call]" prefix naming where it happened. Bad arguments are std::invalid_argument
// (Python ValueError). Nothing here calls exit() or prints.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ar {

// Base of every error raised by a backend (Python: apple_roofline.BackendError, a RuntimeError).
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device is missing, lost, out of memory, or a runtime call on it failed (Python: DeviceError).
class DeviceError : public BackendError {
 public:
  using BackendError::BackendError;
};

// A device wait outlasted its bound (core/waits.h): the device stopped responding while running
// pass(), which was given bound_s() seconds (Python: apple_roofline.errors.DeviceStopped).
class DeviceStopped : public DeviceError {
 public:
  DeviceStopped(const std::string& what, std::string pass, double bound_s)
      : DeviceError(what), pass_(std::move(pass)), bound_s_(bound_s) {}
  const std::string& pass() const noexcept { return pass_; }
  double bound_s() const noexcept { return bound_s_; }

 private:
  std::string pass_;
  double bound_s_;
};

// A kernel failed to compile; log() carries the compiler's full output (Python: CompileError.log).
class CompileError : public BackendError {
 public:
  CompileError(const std::string& what, std::string log) : BackendError(what), log_(std::move(log)) {}
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

// The backend or device lacks an optional capability: a GEMM precision, FP16 arithmetic, render
// passes... (Python: UnsupportedError).
class UnsupportedError : public BackendError {
 public:
  using BackendError::BackendError;
};

}  // namespace ar
