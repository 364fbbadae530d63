// NumPy .npy files (format versions 1.0 and 2.0, little-endian, C order): what the driver's
// --dump writes and --input reads. bf16 has no NumPy dtype; it is stored as its bit patterns
// ('<u2'), and the problem's JSON says which tensors are bf16.
#ifndef ACLNN_CPU_DRIVER_NPY_H_
#define ACLNN_CPU_DRIVER_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace npy {

struct Array {
  std::string descr;  // '<f4', '<f2', '<f8', '<i8', '<i4', '<u2', '|b1'
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;  // C order, element size from descr
};

int64_t ItemSize(const std::string& descr);  // 0 for an unsupported descr
// Returns "" on success, else why it failed (one sentence).
std::string Write(const std::string& path, const Array& a);
std::string Read(const std::string& path, Array* a);

}  // namespace npy

#endif  // ACLNN_CPU_DRIVER_NPY_H_
