// Name lookups over the built-in kernel tables, compiled for the baseline ISA (see kernels.h).
#include "kernels.h"

namespace ar::cpu {

namespace {
// Each file of native/cpu/ that holds built-in kernels, with its table: the source a kernel table names.
struct KernelSource {
  const char* file;
  const KernelEntry* (*table)(size_t*);
};

const KernelSource kSources[] = {{"kernels.cpp", kernel_table},
                                 {"idiv.cpp", idiv_kernel_table},
                                 {"rules.cpp", rules_kernel_table},
                                 {"hierarchy.cpp", hierarchy_kernel_table}};

const KernelEntry* find_in(const KernelSource& src, const std::string& entry) {
  size_t n = 0;
  const KernelEntry* table = src.table(&n);
  for (size_t i = 0; i < n; ++i)
    if (entry == table[i].name) return &table[i];
  return nullptr;
}
}  // namespace

std::vector<std::string> kernel_sources() {
  std::vector<std::string> files;
  for (const auto& src : kSources) files.emplace_back(src.file);
  return files;
}

const KernelEntry* find_kernel(const std::string& source, const std::string& entry) {
  for (const auto& src : kSources)
    if (source == src.file) return find_in(src, entry);
  return nullptr;
}

const char* kernel_source(const std::string& entry) {
  for (const auto& src : kSources)
    if (find_in(src, entry)) return src.file;
  return nullptr;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& src : kSources) {
    size_t n = 0;
    const KernelEntry* table = src.table(&n);
    for (size_t i = 0; i < n; ++i) names.emplace_back(table[i].name);
  }
  return names;
}

}  // namespace ar::cpu
