#include "core/status.h"

#include <cstdio>

#include "acl/acl_base.h"
#include "core/log.h"

namespace aclnn_cpu {
namespace {
// The pending message and the one last handed out (kept alive until the next call).
thread_local std::string t_pending;
thread_local std::string t_returned;
}  // namespace

static std::string VFormat(const char* fmt, va_list ap) {
  char buf[512];
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, copy);
  va_end(copy);
  if (n < 0) return std::string(fmt);
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&s[0], s.size(), fmt, ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

std::string StrFormat(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = VFormat(fmt, ap);
  va_end(ap);
  return s;
}

Status MakeError(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Status st{code, VFormat(fmt, ap)};
  va_end(ap);
  return st;
}

void SetRecentError(const std::string& msg) { t_pending = msg; }

int Fail(const Status& st) {
  SetRecentError(st.msg);
  LogMessage(LogLevel::kError, "%s (code %d)", st.msg.c_str(), st.code);
  if (VerboseEnabled()) VerboseLine("error,%d,%s", st.code, st.msg.c_str());
  return st.code;
}

const char* TakeRecentError() {
  if (t_pending.empty()) return nullptr;
  t_returned.swap(t_pending);
  t_pending.clear();
  return t_returned.c_str();
}

}  // namespace aclnn_cpu

extern "C" ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void) {
  return aclnn_cpu::TakeRecentError();
}
