// Built when the CUDA toolkit was not found at configure time: the Python API stays identical and
// `apple-roofline devices` says why CUDA is absent.
#include "core/backend.h"
#include "core/errors.h"

namespace ar {
BackendStatus cuda_status() { return {"cuda", false, 0, "CUDA toolkit not found when this package was built"}; }
std::shared_ptr<Backend> make_cuda_backend(int) {
  throw UnsupportedError("[cuda] backend not built: CUDA toolkit not found when this package was built");
}
}  // namespace ar
