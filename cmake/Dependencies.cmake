# Every dependency comes from the system's packages (Debian: libhwy-dev, libgtest-dev,
# libbenchmark-dev, libomp/libgomp); nothing is downloaded at build time.
find_package(hwy 1.0 REQUIRED CONFIG)
find_package(Threads REQUIRED)
# OpenMP: the operators' threads (ACLNN_CPU_USE_OPENMP) and the bandwidth kernels.
find_package(OpenMP REQUIRED COMPONENTS CXX)
