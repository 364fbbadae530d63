// Test tensors in aclrtMalloc memory with any layout, filled through the test's own encoders
// (reference.h), with canary bytes everywhere outside the view.
#ifndef ACLNN_CPU_TESTS_SUPPORT_DEVICE_TENSOR_H_
#define ACLNN_CPU_TESTS_SUPPORT_DEVICE_TENSOR_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

namespace testing_support {

enum class Layout { kContiguous, kTransposed, kOffset, kPadded };
const char* LayoutName(Layout l);
constexpr Layout kAllLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kOffset,
                                  Layout::kPadded};

int64_t DtypeBytes(aclDataType t);

// Owns an aclrtMalloc block and an aclTensor viewing it.
class DeviceTensor {
 public:
  static constexpr unsigned char kCanary = 0xA5;
  DeviceTensor(aclDataType dtype, std::vector<int64_t> shape, Layout layout = Layout::kContiguous);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  aclTensor* get() const { return tensor_; }
  aclDataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const;
  void* data() const { return data_; }

  // Values in logical row-major order, rounded to the dtype by the reference's rounding.
  void Set(const std::vector<double>& values);
  std::vector<double> Get() const;
  // Values representable in the dtype (what Set stores), for feeding the reference.
  std::vector<double> Rounded(const std::vector<double>& values) const;
  // True when every storage byte outside the view still holds the canary.
  bool CanariesOutsideViewIntact() const;
  // True when every byte of the storage holds the canary (nothing was written).
  bool Untouched() const;
  // Rewrites the whole storage with canaries.
  void FillCanaries();

 private:
  int64_t ElementOffset(int64_t logical) const;

  aclDataType dtype_;
  std::vector<int64_t> shape_, strides_;
  int64_t offset_ = 0;
  int64_t storage_elems_ = 0;
  void* data_ = nullptr;
  aclTensor* tensor_ = nullptr;
};

std::vector<double> Uniform(std::mt19937_64& rng, int64_t n, double lo, double hi);
std::vector<double> Normal(std::mt19937_64& rng, int64_t n, double mean, double stddev);

// Runs `body` once per Highway target this CPU supports (ForceTarget), and on a target that
// can use the AVX512_BF16 conversions (simd/dispatch.h) once with them and once without
// ("AVX3" and "AVX3 sw-bf16"); restores the default afterwards. body gets the name.
template <typename F>
void ForEachTarget(F&& body);
struct TargetChoice {
  int64_t target = 0;      // 0: the normal choice
  bool hw_convert = true;  // hardware 16-bit conversions where the CPU has them
  std::string name;
};
std::vector<TargetChoice> Targets();
void UseTarget(const TargetChoice& t);

template <typename F>
void ForEachTarget(F&& body) {
  for (const auto& t : Targets()) {
    UseTarget(t);
    body(t.name);
  }
  UseTarget(TargetChoice{});
}

}  // namespace testing_support

#endif  // ACLNN_CPU_TESTS_SUPPORT_DEVICE_TENSOR_H_
