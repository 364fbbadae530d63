// Status: a code plus the one-sentence explanation that aclGetRecentErrMsg() returns.
#ifndef ACLNN_CPU_CORE_STATUS_H_
#define ACLNN_CPU_CORE_STATUS_H_

#include <cstdarg>
#include <string>

namespace aclnn_cpu {

struct Status {
  int code = 0;
  std::string msg;
  bool ok() const { return code == 0; }
};

inline Status OkStatus() { return Status{}; }

// printf-style message construction; only ever called on the error path.
std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status MakeError(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Records `st` as the calling thread's most recent error (and logs it); returns its code.
int Fail(const Status& st);
// Sets / takes the calling thread's recent error message.
void SetRecentError(const std::string& msg);
const char* TakeRecentError();

}  // namespace aclnn_cpu

#define ACLNN_RETURN_IF_ERROR(expr)   \
  do {                                \
    ::aclnn_cpu::Status _st = (expr); \
    if (!_st.ok()) return _st;        \
  } while (0)

#endif  // ACLNN_CPU_CORE_STATUS_H_
