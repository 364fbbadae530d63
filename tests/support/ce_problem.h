// Random cross-entropy problems shaped like CANN's system tests, shared by the forward and
// backward suites.
#ifndef ACLNN_CPU_TESTS_SUPPORT_CE_PROBLEM_H_
#define ACLNN_CPU_TESTS_SUPPORT_CE_PROBLEM_H_

#include <random>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "reference.h"

namespace testing_support {

inline const char* ReductionString(ref::Reduction r) {
  return r == ref::Reduction::kNone ? "none" : (r == ref::Reduction::kSum ? "sum" : "mean");
}

struct CeConfig {
  aclDataType dtype = ACL_FLOAT;
  aclDataType target_dtype = ACL_INT64;
  int64_t n = 4, c = 5;
  ref::Reduction reduction = ref::Reduction::kMean;
  bool weight = false;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  double zloss_scale = 0.0;
  bool grad_zloss = false;
  bool scalar_as_1d = false;  // mean/sum gradLoss as (1,) instead of 0-d
  Layout layout = Layout::kContiguous;
  uint64_t seed = 1;
  std::string Name() const {
    return "dtype " + std::to_string(dtype) + " N " + std::to_string(n) + " C " +
           std::to_string(c) + " " + ReductionString(reduction) + (weight ? " weight" : "") +
           " ignore " + std::to_string(ignore_index) + " ls " + std::to_string(label_smoothing) +
           " z " + std::to_string(zloss_scale) + (grad_zloss ? " gz" : "") + " " +
           LayoutName(layout) + " target " + std::to_string(target_dtype);
  }
  std::vector<int64_t> ScalarShape() const {
    if (reduction == ref::Reduction::kNone) return {n};
    return scalar_as_1d ? std::vector<int64_t>{1} : std::vector<int64_t>{};
  }
};

// Targets in [0, C), about one row in seven set to ignore_index.
inline std::vector<int64_t> RandomTargets(std::mt19937_64& rng, const CeConfig& cfg) {
  std::uniform_int_distribution<int64_t> cls(0, cfg.c - 1), pick(0, 6);
  std::vector<int64_t> t(static_cast<size_t>(cfg.n));
  for (auto& v : t) v = pick(rng) == 0 ? cfg.ignore_index : cls(rng);
  return t;
}

inline ref::CrossEntropyArgs RefArgs(const CeConfig& cfg, const std::vector<int64_t>& target,
                                     const std::vector<double>& weight) {
  ref::CrossEntropyArgs a;
  a.n = cfg.n;
  a.c = cfg.c;
  a.target = target;
  a.weight = weight;
  a.reduction = cfg.reduction;
  a.ignore_index = cfg.ignore_index;
  a.label_smoothing = cfg.label_smoothing;
  a.zloss_scale = cfg.zloss_scale;
  return a;
}

inline std::vector<double> AsDoubles(const std::vector<int64_t>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace testing_support

#endif  // ACLNN_CPU_TESTS_SUPPORT_CE_PROBLEM_H_
