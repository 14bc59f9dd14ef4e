// The default Buffer::fill32 (core/backend.h): in place, for the backends whose buffers are
// host-visible (CPU, Metal); CUDA's fills on the device.
#include <algorithm>
#include <cstdint>

#include "backend.h"
#include "checks.h"
#include "errors.h"

namespace ar {

void Buffer::fill32(uint32_t value, size_t n, size_t offset) {
  check_fill32(n, offset, nbytes());
  if (!n) return;
  void* p = host_ptr();  // waits for the outstanding work (the contract above)
  if (!p)
    throw UnsupportedError("[fill32] this buffer is not host-visible and its backend does not fill on the device");
  auto* words = reinterpret_cast<uint32_t*>(static_cast<unsigned char*>(p) + offset);
  std::fill(words, words + n / 4, value);
}

}  // namespace ar
