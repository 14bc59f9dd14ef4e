// Name lookups over the built-in kernel table, compiled for the baseline ISA (see kernels.h).
#include "kernels.h"

namespace ar::cpu {

namespace {
const KernelEntry* (*const kTables[])(size_t*) = {kernel_table, idiv_kernel_table, rules_kernel_table,
                                                  hierarchy_kernel_table};
}

const KernelEntry* find_kernel(const std::string& entry) {
  for (auto* get : kTables) {
    size_t n = 0;
    const KernelEntry* table = get(&n);
    for (size_t i = 0; i < n; ++i)
      if (entry == table[i].name) return &table[i];
  }
  return nullptr;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (auto* get : kTables) {
    size_t n = 0;
    const KernelEntry* table = get(&n);
    for (size_t i = 0; i < n; ++i) names.emplace_back(table[i].name);
  }
  return names;
}

}  // namespace ar::cpu
