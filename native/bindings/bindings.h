// One init_<area>(m) per binding file, called from module.cpp (MLX's layout).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

#include "../core/backend.h"

namespace ar::bind {
void init_errors(nanobind::module_& m);
void init_backend(nanobind::module_& m);
void init_host(nanobind::module_& m);
void init_coreml(nanobind::module_& m);
void init_rules(nanobind::module_& m);
void init_kernel_cache(nanobind::module_& m);
void init_waits(nanobind::module_& m);
// An Info as a Python dict (backend.cpp): bool, int, float or str values.
nanobind::dict to_dict(const Info& info);
// Bytes as a Python bytes object (backend.cpp), copied.
nanobind::bytes to_bytes(const std::vector<uint8_t>& v);
}  // namespace ar::bind
