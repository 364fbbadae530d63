// SoC-profile rules shared by the log-softmax operators (docs/soc_profiles.md), and the input
// dtypes every operator takes under a profile; the cross-entropy ones are in
// ops/common/cross_entropy.h.
#ifndef ACLNN_CPU_OPS_COMMON_SOC_RULES_H_
#define ACLNN_CPU_OPS_COMMON_SOC_RULES_H_

#include "aclnn/aclnn_base.h"
#include "core/dtype.h"
#include "core/soc.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {

// 161002 for a BF16 tensor under the 910/310P profile, whose NPUs have no BF16 kernels.
inline Status CheckSocTakesDtype(const char* op, const SocProfile& soc, const char* name,
                                 const aclTensor* t) {
  if (soc.family != SocFamily::kAscend910 || t->dtype != ACL_BF16) return OkStatus();
  return MakeError(ACLNN_ERR_PARAM_INVALID,
                   "%s: %s has dtype BF16, which %s does not support (SoC profile %s).", op, name,
                   soc.name, SocFamilyName(soc.family));
}

// The floating input dtypes of an operator whose CANN kernels take FLOAT, FLOAT16 and BF16:
// DOUBLE too under the default profile (aclnn-cpu's extension, computed in double), never under
// an NPU's profile, which refuses it as CANN does (161002, the same sentence).
inline DtypeSpan FloatInputDtypes(const SocProfile& soc) {
  if (soc.is_cpu()) return DtypeSpan(kFloatOrDoubleDtypes);
  return DtypeSpan(kFloatDtypes);
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_SOC_RULES_H_
