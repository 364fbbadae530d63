// Comparing library results with the double reference under derived tolerances (GoogleTest
// assertions); running an operator's two phases is run_op.h.
#ifndef ACLNN_CPU_TESTS_SUPPORT_CHECK_H_
#define ACLNN_CPU_TESTS_SUPPORT_CHECK_H_

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "reference.h"
#include "run_op.h"
#include "tolerance.h"

namespace testing_support {

using tolerance::ErrorStats;
using tolerance::kEps32;
using tolerance::RoundChain;
using tolerance::Tolerance;

// got vs reference (unrounded, double) under the derived tolerance (tolerance.h).
inline ::testing::AssertionResult CheckClose(const std::vector<double>& got,
                                             const std::vector<double>& refv,
                                             const std::vector<double>& bound, aclDataType t,
                                             aclDataType out, ErrorStats* stats = nullptr) {
  const std::string failure = tolerance::Compare(got, refv, bound, t, out, stats);
  if (failure.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failure;
}

}  // namespace testing_support

#endif  // ACLNN_CPU_TESTS_SUPPORT_CHECK_H_
