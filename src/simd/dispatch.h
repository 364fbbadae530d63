// Runtime CPU dispatch: Highway chooses the best compiled target the CPU supports, capped by
// ACLNN_CPU_MAX_TARGET (e.g. "AVX2", "SSE4", "SCALAR"). Plans take their kernel pointers once,
// at phase 1, through ACLNN_DYNAMIC_POINTER.
#ifndef ACLNN_CPU_SIMD_DISPATCH_H_
#define ACLNN_CPU_SIMD_DISPATCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aclnn_cpu {

// Applies the target cap once (idempotent; phase 1 of every operator calls it).
void InitDispatch();
// Name of the target kernels run on now ("AVX2", ...).
const char* CurrentTargetName();
// Bytes of one vector of that target (SVE: the CPU's vector length, 16 to 256).
size_t CurrentVectorBytes();

// For tests and benchmarks: every compiled target this CPU supports, best first, and a switch
// to run on exactly one of them (0 restores the normal choice).
std::vector<int64_t> SupportedCompiledTargets();
void ForceTarget(int64_t target);
const char* TargetName(int64_t target);
// The compiled target named `name` (case-insensitive; "SCALAR" and "EMU128" both name whichever
// portable fallback Highway compiled), or 0.
int64_t CompiledTargetByName(const char* name);

// Hardware 16-bit conversions beyond Highway's targets: f32 -> bf16 with AVX512_BF16
// (vcvtneps2bf16) on the AVX-512 targets. Same bits as the integer rounding (round to nearest
// even, NaN quieted; subnormal lanes take the integer path). On by default where the CPU has
// them; ACLNN_CPU_HW_CONVERT=0 in the environment (read once) or SetHardwareConversions(false)
// turns them off, for A/B runs and for the tests that compare both. Plans made before a change
// keep the kernels they took. (f32 <-> f16 uses F16C / NEON through Highway on every target
// that has them: always on.)
bool CpuHasAvx512Bf16();
bool HardwareConversionsOn();  // CpuHasAvx512Bf16() and not turned off
void SetHardwareConversions(bool on);

}  // namespace aclnn_cpu

// In a Highway multi-target TU (after HWY_EXPORT): the function chosen for the current target.
#define ACLNN_DYNAMIC_POINTER(FUNC) (HWY_DISPATCH_TABLE(FUNC)[hwy::GetChosenTarget().GetIndex()])

#endif  // ACLNN_CPU_SIMD_DISPATCH_H_
