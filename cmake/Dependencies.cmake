# Every dependency comes from the system's packages (Debian: libhwy-dev, libgtest-dev,
# libbenchmark-dev, libomp/libgomp); nothing is downloaded at build time.
find_package(hwy 1.0 REQUIRED CONFIG)
find_package(Threads REQUIRED)
# OpenMP: the operators' threads (ACLNN_CPU_USE_OPENMP) and the bandwidth kernels.
find_package(OpenMP REQUIRED COMPONENTS CXX)
# The matrix products of the fused linear cross-entropy: oneDNN (Debian: libdnnl-dev), chosen
# over OpenBLAS by bench/blas_bench.cc (docs/large_vocab.md).
find_package(dnnl 2.6 REQUIRED CONFIG)
