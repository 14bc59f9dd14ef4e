// Argument checks every backend shares (plain C++, header-only).
#pragma once

#include <cctype>
#include <cstddef>
#include <stdexcept>
#include <string>

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

}  // namespace ar
