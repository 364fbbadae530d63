// Running an operator's two phases and the synchronize, with a workspace allocated for the call.
// Shared by the test suites and the operator table's Call; no GoogleTest here.
#ifndef ACLNN_CPU_TESTS_SUPPORT_RUN_OP_H_
#define ACLNN_CPU_TESTS_SUPPORT_RUN_OP_H_

#include <cstdint>
#include <string>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"

namespace testing_support {

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
    aclDestroyAclOpExecutor(ex);
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

#endif  // ACLNN_CPU_TESTS_SUPPORT_RUN_OP_H_
