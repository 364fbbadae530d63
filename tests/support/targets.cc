// The Highway targets the tests iterate over (internal API: the library's dispatch).
#include "device_tensor.h"
#include "simd/dispatch.h"

namespace testing_support {

std::vector<std::pair<int64_t, std::string>> Targets() {
  std::vector<std::pair<int64_t, std::string>> out;
  for (int64_t t : aclnn_cpu::SupportedCompiledTargets()) {
    out.emplace_back(t, aclnn_cpu::TargetName(t));
  }
  return out;
}

void UseTarget(int64_t target) { aclnn_cpu::ForceTarget(target); }

}  // namespace testing_support
