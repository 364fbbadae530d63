#include "simd/dispatch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/dispatch.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {
int64_t CompiledTarget() { return HWY_TARGET; }
// Bytes of one full vector (SVE: the vector length the CPU runs at, known at run time only).
size_t VectorBytes() {
  return hwy::HWY_NAMESPACE::Lanes(hwy::HWY_NAMESPACE::ScalableTag<uint8_t>());
}
}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace aclnn_cpu {
HWY_EXPORT(CompiledTarget);
HWY_EXPORT(VectorBytes);

namespace {

std::mutex g_mu;
std::atomic<bool> g_ready{false};  // fast path for InitDispatch after the first call

// The single-bit target values compiled into this library, best (smallest) first.
std::vector<int64_t> CompiledTargetBits() {
  std::vector<int64_t> bits;
  for (int i = 0; i < 63; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (HWY_TARGETS & bit) bits.push_back(bit);
  }
  return bits;
}
bool g_initialized = false;

int64_t CappedTargets() {
  int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  const char* cap = std::getenv("ACLNN_CPU_MAX_TARGET");
  if (cap == nullptr || *cap == '\0') return targets;
  const int64_t bit = CompiledTargetByName(cap);
  if (bit == 0) return targets;  // unknown name: no cap (documented)
  // Better targets have smaller bits: keep `bit` and everything worse.
  const int64_t capped = targets & ~(bit - 1);
  return capped != 0 ? capped : targets;
}

void UpdateLocked(int64_t forced) {
  int64_t mask = forced != 0 ? forced : CappedTargets();
  hwy::GetChosenTarget().Update(mask);
  g_initialized = true;
  g_ready.store(true, std::memory_order_release);
}

}  // namespace

void InitDispatch() {
  if (g_ready.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_initialized) UpdateLocked(0);
}

const char* CurrentTargetName() {
  InitDispatch();
  return hwy::TargetName(ACLNN_DYNAMIC_POINTER(CompiledTarget)());
}

size_t CurrentVectorBytes() {
  InitDispatch();
  return ACLNN_DYNAMIC_POINTER(VectorBytes)();
}

const char* TargetName(int64_t target) { return hwy::TargetName(target); }

int64_t CompiledTargetByName(const char* name) {
  std::string want(name);
  for (char& c : want) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int64_t bit : CompiledTargetBits()) {
    const bool fallback = bit == HWY_SCALAR || bit == HWY_EMU128;
    if (want == hwy::TargetName(bit) || (fallback && (want == "SCALAR" || want == "EMU128"))) {
      return bit;
    }
  }
  return 0;
}

std::vector<int64_t> SupportedCompiledTargets() {
  std::vector<int64_t> out;
  const int64_t supported = hwy::SupportedTargets();
  for (int64_t bit : CompiledTargetBits()) {
    if (supported & bit) out.push_back(bit);
  }
  return out;
}

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    // CPUID.(EAX=7, ECX=1):EAX bit 5; subleaf 1 exists when leaf 7's EAX (max subleaf) >= 1.
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || a < 1) return false;
    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
    return (a & (1u << 5)) != 0;
  }();
  return has;
#else
  return false;
#endif
}

namespace {
// Tri-state: -1 = not yet read from the environment.
std::atomic<int> g_hw_convert{-1};
}  // namespace

bool HardwareConversionsOn() {
  int on = g_hw_convert.load(std::memory_order_acquire);
  if (on < 0) {
    const char* env = std::getenv("ACLNN_CPU_HW_CONVERT");
    on = (env != nullptr && std::string(env) == "0") ? 0 : 1;
    int expected = -1;
    if (!g_hw_convert.compare_exchange_strong(expected, on)) on = expected;
  }
  return on != 0 && CpuHasAvx512Bf16();
}

void SetHardwareConversions(bool on) { g_hw_convert.store(on ? 1 : 0, std::memory_order_release); }

void ForceTarget(int64_t target) {
  std::lock_guard<std::mutex> lock(g_mu);
  UpdateLocked(target);
}

}  // namespace aclnn_cpu
#endif  // HWY_ONCE
