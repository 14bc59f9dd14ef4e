// Name lookups over the built-in kernel table, compiled for the baseline ISA (see kernels.h).
#include "kernels.h"

namespace ar::cpu {

const KernelEntry* find_kernel(const std::string& entry) {
  size_t n = 0;
  const KernelEntry* table = kernel_table(&n);
  for (size_t i = 0; i < n; ++i)
    if (entry == table[i].name) return &table[i];
  return nullptr;
}

std::vector<std::string> kernel_names() {
  size_t n = 0;
  const KernelEntry* table = kernel_table(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.emplace_back(table[i].name);
  return names;
}

}  // namespace ar::cpu
