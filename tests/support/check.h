// Comparing library results with the double reference under derived tolerances, and running an
// operator's two phases.
#ifndef ACLNN_CPU_TESTS_SUPPORT_CHECK_H_
#define ACLNN_CPU_TESTS_SUPPORT_CHECK_H_

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "reference.h"

namespace testing_support {

constexpr double kEps32 = 1.0 / 16777216.0;  // 2^-24, unit roundoff of f32

// The chain of roundings a result goes through: computed in f32 (or double), rounded to the
// compute dtype `t`, then converted to the output dtype `out`.
inline double RoundChain(aclDataType t, aclDataType out, double v) {
  return ref::RoundTo(out, ref::RoundTo(t, v));
}

// Allowed error for one element: `bound` (the f32 arithmetic's error bound, from the formula's
// term magnitudes) plus half an ulp for every round-to-nearest step the result goes through
// (a truncating conversion fails this).
inline double Tolerance(aclDataType t, aclDataType out, double refv, double bound) {
  const double a = std::fabs(refv) + bound;
  double tol = bound + 0.5 * ref::Ulp(t == ACL_DOUBLE ? ACL_FLOAT : t, a);
  if (out != t && out != ACL_DOUBLE) tol += 0.5 * ref::Ulp(out, a);
  return tol;
}

struct ErrorStats {
  double max_ulp = 0.0;  // in ulps of the output dtype at the rounded reference
  // The same over well-conditioned elements: those whose f32 error bound is at most a quarter
  // ulp of the output (cancellation can make f32 arithmetic miss by more elsewhere).
  double max_ulp_conditioned = 0.0;
  double max_tolerance_used = 0.0;  // max of error / tolerance
  int64_t nonzero = 0;
  int64_t count = 0;
};

// got vs reference (unrounded, double). bound[i]: f32 arithmetic error bound of element i.
inline ::testing::AssertionResult CheckClose(const std::vector<double>& got,
                                             const std::vector<double>& refv,
                                             const std::vector<double>& bound, aclDataType t,
                                             aclDataType out, ErrorStats* stats = nullptr) {
  ErrorStats local;
  ErrorStats& st = stats ? *stats : local;
  if (got.size() != refv.size()) return ::testing::AssertionFailure() << "size mismatch";
  for (size_t i = 0; i < got.size(); ++i) {
    const double r = RoundChain(t, out, refv[i]);
    ++st.count;
    if (got[i] != 0.0) ++st.nonzero;
    if (!std::isfinite(r) || !std::isfinite(got[i])) {
      const bool same = (std::isnan(r) && std::isnan(got[i])) || r == got[i];
      if (!same) {
        return ::testing::AssertionFailure()
               << "element " << i << ": got " << got[i] << ", reference " << refv[i] << " (rounded "
               << r << ")";
      }
      continue;
    }
    const double err = std::fabs(got[i] - refv[i]);
    const double tol = Tolerance(t, out, refv[i], bound[i]);
    if (tol > 0.0) st.max_tolerance_used = std::max(st.max_tolerance_used, err / tol);
    const double ulps = std::fabs(got[i] - r) / ref::Ulp(out, r);
    st.max_ulp = std::max(st.max_ulp, ulps);
    if (bound[i] <= 0.25 * ref::Ulp(out, r)) {
      st.max_ulp_conditioned = std::max(st.max_ulp_conditioned, ulps);
    }
    if (!(err <= tol)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", reference " << refv[i] << ", error "
             << err << " > tolerance " << tol << " (bound " << bound[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

struct OpResult {
  int status = 0;       // first non-success code (phase 1, phase 2 or synchronize)
  int failed_step = 0;  // 1, 2 or 3; 0 on success
  uint64_t workspace = 0;
  std::string message;  // aclGetRecentErrMsg() after the failing step
};

inline std::string TakeMessage() {
  const char* m = aclGetRecentErrMsg();
  return m ? std::string(m) : std::string();
}

// phase1(&ws, &executor) -> status; phase2 is the operator's aclnnXxx.
template <typename Phase1, typename Phase2>
OpResult RunOp(Phase1&& phase1, Phase2 phase2, aclrtStream stream = nullptr) {
  OpResult r;
  aclOpExecutor* ex = nullptr;
  int st = phase1(&r.workspace, &ex);
  if (st != 0) return OpResult{st, 1, r.workspace, TakeMessage()};
  void* ws = nullptr;
  if (r.workspace > 0 && aclrtMalloc(&ws, r.workspace, ACL_MEM_MALLOC_HUGE_FIRST) != 0) {
    return OpResult{-1, 2, r.workspace, "workspace allocation failed"};
  }
  st = phase2(ws, r.workspace, ex, stream);
  if (st != 0) {
    if (ws) aclrtFree(ws);
    return OpResult{st, 2, r.workspace, TakeMessage()};
  }
  st = aclrtSynchronizeStream(stream);
  r.message = TakeMessage();
  if (ws) aclrtFree(ws);
  if (st != 0) return OpResult{st, 3, r.workspace, r.message};
  return r;
}

}  // namespace testing_support

#endif  // ACLNN_CPU_TESTS_SUPPORT_CHECK_H_
