// The Highway targets the tests iterate over (internal API: the library's dispatch).
#include <cstdlib>
#include <cstring>

#include "device_tensor.h"
#include "simd/dispatch.h"

namespace testing_support {

namespace {
// The environment's choice (ACLNN_CPU_HW_CONVERT=0 turns the conversions off), restored after.
bool DefaultHardwareConversions() {
  const char* env = std::getenv("ACLNN_CPU_HW_CONVERT");
  return env == nullptr || std::strcmp(env, "0") != 0;
}
}  // namespace

std::vector<TargetChoice> Targets() {
  std::vector<TargetChoice> out;
  for (int64_t t : aclnn_cpu::SupportedCompiledTargets()) {
    const std::string name = aclnn_cpu::TargetName(t);
    out.push_back({t, true, name});
    // The AVX-512 targets convert to bf16 with AVX512_BF16 where the CPU has it: also without.
    if (aclnn_cpu::CpuHasAvx512Bf16() && name.rfind("AVX3", 0) == 0) {
      out.push_back({t, false, name + " sw-bf16"});
    }
  }
  return out;
}

void UseTarget(const TargetChoice& t) {
  aclnn_cpu::SetHardwareConversions(t.target == 0 ? DefaultHardwareConversions() : t.hw_convert);
  aclnn_cpu::ForceTarget(t.target);
}

}  // namespace testing_support
