#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "apple_roofline native core: backends (CPU, CUDA, Metal), buffers and timed kernels";
  ar::bind::init_errors(m);
  ar::bind::init_backend(m);
  ar::bind::init_host(m);
  ar::bind::init_coreml(m);
  ar::bind::init_rules(m);
  ar::bind::init_kernel_cache(m);
  ar::bind::init_waits(m);
}
