# Cross build for 64-bit Arm (AArch64) Linux from an x86-64 Debian machine:
#   Debian's g++-aarch64-linux-gnu, and the arm64 builds of Highway and GoogleTest through
#   multiarch (dpkg --add-architecture arm64; apt-get install libhwy-dev:arm64
#   libgtest-dev:arm64); OpenMP from the cross compiler's own libgomp. Tests run under
#   qemu-user (CMAKE_CROSSCOMPILING_EMULATOR; scripts/aarch64.sh picks the CPU model with
#   QEMU_CPU) on the arm64 multiarch runtime (libc6, libstdc++6, libgomp1 :arm64), found where
#   the programs' loader path /lib/ld-linux-aarch64.so.1 points. Not `-L /usr/aarch64-linux-gnu`:
#   that loader is another glibc build (libc6-arm64-cross) than the multiarch libc the libraries
#   then come from, and every pthread_create hangs with the two mixed.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: the arm64 packages' libraries and CMake packages live in /usr/lib/aarch64-linux-gnu,
# the cross toolchain's runtime in /usr/aarch64-linux-gnu; headers are shared in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
endif()
