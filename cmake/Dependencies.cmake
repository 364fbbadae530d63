# Every dependency comes from the system's packages (Debian: libhwy-dev, libgtest-dev,
# libbenchmark-dev, libomp/libgomp); nothing is downloaded at build time.
find_package(hwy 1.0 REQUIRED CONFIG)
find_package(Threads REQUIRED)
# OpenMP: the operators' threads (ACLNN_CPU_USE_OPENMP) and the bandwidth kernels.
find_package(OpenMP REQUIRED COMPONENTS CXX)
# The matrix products of the fused linear cross-entropy: oneDNN (Debian: libdnnl-dev), chosen
# over OpenBLAS by bench/blas_bench.cc (docs/large_vocab.md).
find_package(dnnl 2.6 CONFIG QUIET)
if(NOT dnnl_FOUND)
  # Cross builds (scripts/aarch64.sh): Debian's libdnnl-dev cannot be installed for a second
  # architecture (its dnnl_config.h differs between them, in the GPU runtime only, which the
  # CPU engine does not use), so the target's runtime library (libdnnl2:arm64) is linked with
  # the build machine's headers.
  find_library(ACLNN_CPU_DNNL_LIBRARY NAMES dnnl libdnnl.so.2 REQUIRED)
  find_path(ACLNN_CPU_DNNL_INCLUDE oneapi/dnnl/dnnl.hpp REQUIRED)
  add_library(DNNL::dnnl SHARED IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${ACLNN_CPU_DNNL_LIBRARY}
                                              INTERFACE_INCLUDE_DIRECTORIES ${ACLNN_CPU_DNNL_INCLUDE})
  message(STATUS "aclnn-cpu: oneDNN without its CMake package: ${ACLNN_CPU_DNNL_LIBRARY}")
endif()
