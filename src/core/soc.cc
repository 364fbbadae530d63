#include "core/soc.h"

#include <atomic>
#include <cctype>
#include <cstring>
#include <forward_list>
#include <mutex>
#include <string>

#include "acl/acl_base.h"

namespace aclnn_cpu {
namespace {

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

// Letters, digits, '_' and '-' only, at most 48 characters (SoC names as CANN spells them).
bool PlainName(const char* s) {
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    const unsigned char ch = static_cast<unsigned char>(s[n]);
    if (!std::isalnum(ch) && ch != '_' && ch != '-') return false;
  }
  return n > 0 && n <= 48;
}

struct Entry {
  SocFamily family;
  std::string name;
};

const Entry kCpuEntry{SocFamily::kCpu, kCpuSocName};

// One entry per name ever selected, never freed, so that CurrentSoc().name stays valid.
std::mutex g_mu;
std::forward_list<Entry> g_entries;
std::atomic<const Entry*> g_current{&kCpuEntry};

}  // namespace

const char* SocFamilyName(SocFamily f) {
  switch (f) {
    case SocFamily::kCpu:
      return "CPU (aclnn-cpu's default)";
    case SocFamily::kAscend910B:
      return "910B-family (Atlas A2/A3)";
    case SocFamily::kAscend950:
      return "950";
    case SocFamily::kAscend910:
      return "910/310P";
  }
  return "?";
}

bool ParseSocName(const char* name, SocFamily* family) {
  if (name == nullptr || name[0] == '\0' || std::strcmp(name, kCpuSocName) == 0) {
    *family = SocFamily::kCpu;
    return true;
  }
  if (!PlainName(name)) return false;
  // Ascend910B1..Ascend910B4 with CANN's suffixes (Ascend910B2C, Ascend910B4-1).
  if (StartsWith(name, "Ascend910B") && name[10] >= '1' && name[10] <= '4') {
    *family = SocFamily::kAscend910B;
    return true;
  }
  // Ascend910_93xx (Atlas A3).
  if (StartsWith(name, "Ascend910_93") && std::isdigit(static_cast<unsigned char>(name[12])) &&
      std::isdigit(static_cast<unsigned char>(name[13])) && name[14] == '\0') {
    *family = SocFamily::kAscend910B;
    return true;
  }
  if (StartsWith(name, "Ascend950")) {
    *family = SocFamily::kAscend950;
    return true;
  }
  static const char* const kOlder910[] = {"Ascend910A", "Ascend910ProA", "Ascend910PremiumA",
                                          "Ascend910ProB"};
  for (const char* known : kOlder910) {
    if (std::strcmp(name, known) == 0) {
      *family = SocFamily::kAscend910;
      return true;
    }
  }
  if (StartsWith(name, "Ascend310P") && name[10] != '\0') {
    *family = SocFamily::kAscend910;
    return true;
  }
  return false;
}

Status SelectSoc(const char* name) {
  SocFamily family;
  if (!ParseSocName(name, &family)) {
    return MakeError(
        ACL_ERROR_INVALID_PARAM,
        "aclInit: %s=\"%.60s\" is not a known SoC; known: Ascend910B1..Ascend910B4 and "
        "Ascend910_93xx (910B-family), Ascend950... (950), Ascend910A, "
        "Ascend910ProA, Ascend910PremiumA, Ascend910ProB and Ascend310P... "
        "(910/310P), or %s (the default).",
        kSocEnvVar, name, kCpuSocName);
  }
  if (family == SocFamily::kCpu) {
    g_current.store(&kCpuEntry, std::memory_order_release);
    return OkStatus();
  }
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Entry& e : g_entries) {
    if (e.name == name) {
      g_current.store(&e, std::memory_order_release);
      return OkStatus();
    }
  }
  g_entries.push_front(Entry{family, name});
  g_current.store(&g_entries.front(), std::memory_order_release);
  return OkStatus();
}

SocProfile CurrentSoc() {
  const Entry* e = g_current.load(std::memory_order_acquire);
  return SocProfile{e->family, e->name.c_str()};
}

}  // namespace aclnn_cpu
