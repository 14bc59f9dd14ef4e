// The default Buffer::fill32 (core/backend.h): in place where the buffer is host-visible, else
// through write() from a host block of the word, a chunk at a time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend.h"
#include "checks.h"

namespace ar {

namespace {

// Bytes of the host block a non-host-visible buffer is filled from, one write() each.
constexpr size_t kFillChunk = size_t(4) << 20;

}  // namespace

void Buffer::fill32(uint32_t value, size_t n, size_t offset) {
  check_fill32(n, offset, nbytes());
  if (!n) return;
  if (void* p = host_ptr()) {  // host_ptr() waits for the outstanding work (the contract above)
    auto* words = reinterpret_cast<uint32_t*>(static_cast<unsigned char*>(p) + offset);
    std::fill(words, words + n / 4, value);
    return;
  }
  std::vector<uint32_t> block(std::min(n, kFillChunk) / 4, value);
  for (size_t done = 0; done < n;) {
    const size_t step = std::min(n - done, block.size() * 4);
    write(block.data(), step, offset + done);
    done += step;
  }
}

}  // namespace ar
