// Target selection: names (ACLNN_CPU_MAX_TARGET, the driver's --cpu-target) and the cap.
#include "simd/dispatch.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/row_kernels.h"

namespace {

using aclnn_cpu::CompiledTargetByName;
using aclnn_cpu::SupportedCompiledTargets;
using aclnn_cpu::TargetName;

TEST(Dispatch, TargetNamesRoundTrip) {
  const std::vector<int64_t> targets = SupportedCompiledTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t t : targets) {
    std::string lower = TargetName(t);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(CompiledTargetByName(TargetName(t)), t) << TargetName(t);
    EXPECT_EQ(CompiledTargetByName(lower.c_str()), t) << lower;
  }
  EXPECT_EQ(CompiledTargetByName("NOSUCH"), 0);
  EXPECT_EQ(CompiledTargetByName(""), 0);
}

// Highway compiles SCALAR or EMU128 as the portable fallback depending on the compiler; both
// names mean that one (regression: a clang build refused "SCALAR").
TEST(Dispatch, ScalarAndEmu128NameTheFallback) {
  const int64_t fallback = SupportedCompiledTargets().back();
  EXPECT_EQ(CompiledTargetByName("SCALAR"), fallback);
  EXPECT_EQ(CompiledTargetByName("emu128"), fallback);
}

// Every target this CPU runs, with its vector size (under qemu-aarch64 this shows the SVE vector
// length a run was given); the best one is the default.
TEST(Dispatch, ReportsTargetsAndVectorSizes) {
  std::string line;
  for (int64_t t : SupportedCompiledTargets()) {
    aclnn_cpu::ForceTarget(t);
    EXPECT_STREQ(aclnn_cpu::CurrentTargetName(), TargetName(t));
    const size_t bytes = aclnn_cpu::CurrentVectorBytes();
    EXPECT_GE(bytes, 1u);  // SCALAR: one lane
    EXPECT_LE(bytes, 256u);
    line += std::string(line.empty() ? "" : ", ") + TargetName(t) + " (" + std::to_string(bytes) +
            "-byte vectors)";
  }
  aclnn_cpu::ForceTarget(0);
  EXPECT_STREQ(aclnn_cpu::CurrentTargetName(), TargetName(SupportedCompiledTargets().front()));
  std::printf("dispatch: this CPU runs %s\n", line.c_str());
}

TEST(Dispatch, EnvironmentCapsTheTarget) {
  const int64_t fallback = SupportedCompiledTargets().back();
  ASSERT_EQ(setenv("ACLNN_CPU_MAX_TARGET", "scalar", 1), 0);
  aclnn_cpu::ForceTarget(0);  // re-reads the cap
  EXPECT_STREQ(aclnn_cpu::CurrentTargetName(), TargetName(fallback));
  ASSERT_EQ(setenv("ACLNN_CPU_MAX_TARGET", "NOSUCH", 1), 0);  // unknown: no cap
  aclnn_cpu::ForceTarget(0);
  EXPECT_STREQ(aclnn_cpu::CurrentTargetName(), TargetName(SupportedCompiledTargets().front()));
  unsetenv("ACLNN_CPU_MAX_TARGET");
  aclnn_cpu::ForceTarget(0);
}

}  // namespace

// The AVX512_BF16 conversions: on where the CPU has them, off with ACLNN_CPU_HW_CONVERT=0 (the
// CTest entry dispatch_hw_convert_env runs this test so) or SetHardwareConversions(false); the
// bf16 kernels follow, on the AVX-512 targets only.
TEST(Dispatch, HardwareConversionsFollowTheCpuAndTheSwitch) {
  const char* env = std::getenv("ACLNN_CPU_HW_CONVERT");
  const bool off = env != nullptr && std::string(env) == "0";
  EXPECT_EQ(aclnn_cpu::HardwareConversionsOn(), aclnn_cpu::CpuHasAvx512Bf16() && !off);
  for (bool on : {false, true}) {
    aclnn_cpu::SetHardwareConversions(on);
    for (int64_t t : SupportedCompiledTargets()) {
      aclnn_cpu::ForceTarget(t);
      const bool avx512 = std::string(TargetName(t)).rfind("AVX3", 0) == 0;
      const bool hw = on && avx512 && aclnn_cpu::CpuHasAvx512Bf16();
      EXPECT_STREQ(aclnn_cpu::GetRowKernels(ACL_BF16).dtype, hw ? "bf16hw" : "bf16")
          << TargetName(t) << " conversions " << on;
      EXPECT_STREQ(aclnn_cpu::GetRowKernels(ACL_FLOAT).dtype, "f32");
    }
  }
  aclnn_cpu::ForceTarget(0);
  aclnn_cpu::SetHardwareConversions(!off);
}
