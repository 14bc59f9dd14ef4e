// Argument checks every backend shares (plain C++, header-only).
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

namespace ar {

// A C / MSL identifier: kernel entries and constant names, which become -D macros or function
// constant names.
inline bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Buffer::write / read range check: std::invalid_argument naming the copy and the buffer's size.
inline void check_range(size_t n, size_t offset, size_t nbytes, const char* what) {
  if (offset > nbytes || n > nbytes - offset)
    throw std::invalid_argument(std::string(what) + " of " + std::to_string(n) + " bytes at offset " +
                                std::to_string(offset) + " is out of range for a buffer of " + std::to_string(nbytes) +
                                " bytes");
}

// A Buffer::fill32 span: n bytes at a byte offset, whole 32-bit words within nbytes;
// std::invalid_argument naming what is wrong otherwise.
inline void check_fill32(size_t n, size_t offset, size_t nbytes) {
  if (n % 4 != 0 || offset % 4 != 0)
    throw std::invalid_argument("fill32: " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                                " are not whole 32-bit words (both must be multiples of 4)");
  check_range(n, offset, nbytes, "fill32");
}

// The work-item count of one launch (Kernel::time / launch / timeline): std::invalid_argument when
// it is 0. The message names it as C++ and Python do, `work_items`.
inline void check_work_items(uint64_t work_items) {
  if (work_items == 0) throw std::invalid_argument("work_items must be at least 1");
}

// The work-item count of a vendor-library GEMM's launch (Backend::gemm kernels' time / launch):
// one matrix product, so std::invalid_argument unless it is 1.
inline void check_gemm_launch(uint64_t work_items) {
  if (work_items != 1) throw std::invalid_argument("a GEMM launch is one matrix product: work_items must be 1");
}

// The constant BLOCK, threads per `group` ("block" on CUDA, "threadgroup" on Metal), checked and
// returned: an int multiple of 32 (the warp / simdgroup width) from 32 to 1024.
inline int check_block(const std::variant<int64_t, double>& value, const char* group) {
  const int64_t* b = std::get_if<int64_t>(&value);
  if (!b || *b < 32 || *b > 1024 || *b % 32)
    throw std::invalid_argument(
        std::string("constant BLOCK must be an int multiple of 32 from 32 to 1024 (threads per ") + group + ")");
  return int(*b);
}

// The `Concrete` buffer behind kernel argument `position`, checked to be one of this backend's
// (a `Concrete`, `backend` naming it: "CUDA", "Metal") and to belong to `dev` (Concrete::device()
// returns a const Dev*); std::invalid_argument naming the argument else.
template <class Concrete, class Base, class Dev>
Concrete& buffer_arg_of(Base* b, const Dev& dev, size_t position, const char* backend) {
  auto* c = dynamic_cast<Concrete*>(b);
  if (!c) throw std::invalid_argument("argument " + std::to_string(position) + " is not a " + backend + " buffer");
  if (c->device() != &dev)
    throw std::invalid_argument("argument " + std::to_string(position) + " is a buffer of another " + backend +
                                " device");
  return *c;
}

}  // namespace ar
