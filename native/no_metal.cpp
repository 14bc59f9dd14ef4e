// Built everywhere but macOS: the Python API stays identical and `apple-roofline devices` says why
// Metal is absent.
#include "core/backend.h"
#include "core/errors.h"

namespace ar {
BackendStatus metal_status() { return {"metal", false, 0, "the Metal backend is built on macOS only"}; }
std::shared_ptr<Backend> make_metal_backend(int) {
  throw UnsupportedError("[metal] backend not built: the Metal backend is built on macOS only");
}
}  // namespace ar
