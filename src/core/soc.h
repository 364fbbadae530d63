// SoC profiles (docs/soc_profiles.md): which Ascend NPU's rules the operators follow. The
// default (the CPU profile) is the specification with CANN's gaps filled; a named SoC makes the
// operators refuse what that NPU refuses, with its status codes, and compute what it computes.
// The profile is chosen at aclInit from ACLNN_CPU_SOC and read by each operator at phase 1.
#ifndef ACLNN_CPU_CORE_SOC_H_
#define ACLNN_CPU_CORE_SOC_H_

#include "core/status.h"

namespace aclnn_cpu {

enum class SocFamily {
  kCpu,         // the default: CANN's API with its gaps filled
  kAscend910B,  // Atlas A2/A3: Ascend910B1..B4, Ascend910_93xx
  kAscend950,   // Ascend950...
  kAscend910,   // the older training/inference SoCs: Ascend910A/ProA/..., Ascend310P...
};

struct SocProfile {
  SocFamily family = SocFamily::kCpu;
  const char* name = "";  // what aclrtGetSocName() returns; static storage

  bool is_cpu() const { return family == SocFamily::kCpu; }
  // The NPU accepts z-loss arguments of the cross-entropy operators and ignores them.
  bool ignores_zloss() const {
    return family == SocFamily::kAscend910B || family == SocFamily::kAscend950;
  }
};

// aclrtGetSocName() under the default profile.
inline constexpr const char* kCpuSocName = "aclnn-cpu";
// The environment variable aclInit reads.
inline constexpr const char* kSocEnvVar = "ACLNN_CPU_SOC";

// The family's name in messages, e.g. "910B-family (Atlas A2/A3)".
const char* SocFamilyName(SocFamily f);

// The family of SoC `name` (nullptr or "" or kCpuSocName: kCpu); false if it is not known.
bool ParseSocName(const char* name, SocFamily* family);

// Makes `name` the profile of every later phase 1 (nullptr or "": the default). An unknown name
// changes nothing and returns ACL_ERROR_INVALID_PARAM with a sentence listing the known ones.
Status SelectSoc(const char* name);

// The profile in force (a snapshot: valid for the life of the process).
SocProfile CurrentSoc();

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_CORE_SOC_H_
