#include <stdexcept>

#include "backend.h"
#include "errors.h"

namespace ar {

std::vector<BackendStatus> available_backends() { return {cpu_status(), cuda_status(), metal_status()}; }

std::shared_ptr<Backend> make_backend(const std::string& name, int index) {
  if (index < 0)
    throw std::invalid_argument("device index " + std::to_string(index) + " is negative (valid: 0 or more)");
  BackendStatus status;
  if (name == "cpu") status = cpu_status();
  else if (name == "cuda") status = cuda_status();
  else if (name == "metal") status = metal_status();
  else throw std::invalid_argument("unknown backend '" + name + "' (valid: cpu, cuda, metal)");
  if (!status.compiled) throw UnsupportedError("[" + name + "] backend not built: " + status.reason);
  if (index >= status.devices) {
    std::string why = status.devices == 0 ? "no device found"
                                          : std::to_string(status.devices) + " device(s), valid indices 0.." +
                                                std::to_string(status.devices - 1);
    if (!status.reason.empty()) why += ": " + status.reason;
    throw DeviceError("[" + name + "] no device " + std::to_string(index) + " (" + why + ")");
  }
  if (name == "cpu") return make_cpu_backend(index);
  if (name == "cuda") return make_cuda_backend(index);
  return make_metal_backend(index);
}

}  // namespace ar
