// One init_<area>(m) per binding file, called from module.cpp (MLX's layout).
#pragma once

#include <nanobind/nanobind.h>

namespace ar::bind {
void init_errors(nanobind::module_& m);
void init_backend(nanobind::module_& m);
void init_host(nanobind::module_& m);
}  // namespace ar::bind
