// aclnn_cpu._C's cache of large host blocks for the torch tensors the package allocates (gradients,
// log-probabilities): see block_cache.cc.
#ifndef ACLNN_CPU_PYTHON_BLOCK_CACHE_H_
#define ACLNN_CPU_PYTHON_BLOCK_CACHE_H_

#include <nanobind/nanobind.h>

// Adds cached_empty, cache_info, empty_cache and set_cache_limit to the module.
void BindBlockCache(nanobind::module_& m);

#endif  // ACLNN_CPU_PYTHON_BLOCK_CACHE_H_
