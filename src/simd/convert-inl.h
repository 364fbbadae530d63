// Shared Highway helpers (per-target include guard): load FLOAT/FLOAT16/BF16 as f32, store f32
// to those types rounding to nearest even, and an exp with IEEE edge cases. DOUBLE computes in
// f64 lanes: its "F32" loads and stores are plain f64 ones (CTag<T> is the compute tag of T).
//
// Highway 1.0.3's f32->bf16 DemoteTo truncates, and its software f32->f16 DemoteTo (targets
// without F16C) truncates too; our stores round to nearest even on every target.
//
// Two bf16 lane types: hwy::bfloat16_t rounds with integer operations; Bf16Hw (same bits in
// memory) rounds with AVX512_BF16's vcvtneps2bf16 / vcvtne2ps2bf16 on Highway's AVX-512
// targets, and with the integer operations on every other target. Kernels are compiled for
// both; GetRowKernels picks Bf16Hw's only where the CPU has AVX512_BF16 (simd/dispatch.h).
// Both give the same bits: the instruction rounds to nearest even and quiets NaN as the integer
// path does, and reads subnormal inputs as zero, so a vector with a subnormal lane converts
// with the integer path.
#ifndef ACLNN_CPU_SIMD_BF16_HW_TYPE_
#define ACLNN_CPU_SIMD_BF16_HW_TYPE_
#include <cstdint>
namespace aclnn_cpu {
struct Bf16Hw {
  uint16_t bits;
};
}  // namespace aclnn_cpu
#endif
#if defined(ACLNN_CPU_SIMD_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ACLNN_CPU_SIMD_CONVERT_INL_H_
#undef ACLNN_CPU_SIMD_CONVERT_INL_H_
#else
#define ACLNN_CPU_SIMD_CONVERT_INL_H_
#endif

#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"
#include "hwy/cache_control.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

// Whether this target converts f32 to f16 in hardware (vcvtps2ph / fcvtn, round to nearest
// even); re-evaluated for each target.
#undef ACLNN_CPU_HW_F16
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)) || \
    (HWY_ARCH_ARM && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR)
#define ACLNN_CPU_HW_F16 1
#else
#define ACLNN_CPU_HW_F16 0
#endif

// Whether this target has the AVX512_BF16 conversions (compiled in; run only where the CPU has
// them). Highway 1.0.3 has no target that enables them, so they are written as inline assembly
// (which needs no compiler target flag) inside the AVX-512 targets' code.
#undef ACLNN_CPU_HW_BF16
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define ACLNN_CPU_HW_BF16 1
#else
#define ACLNN_CPU_HW_BF16 0
#endif

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// The lanes a kernel over elements of T computes in: f64 for double, f32 for everything else.
template <class T>
using ComputeT = std::conditional_t<std::is_same_v<T, double>, double, float>;
template <class T>
using CTag = hn::ScalableTag<ComputeT<T>>;

template <class D>
HWY_INLINE hn::Vec<D> LoadF32(D d, const double* p) {
  return hn::LoadU(d, p);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadF32(D d, const float* p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadF32(D d, const hwy::bfloat16_t* p) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, D>(), p));
}
template <class D>
HWY_INLINE hn::Vec<D> LoadF32(D d, const Bf16Hw* p) {
  return LoadF32(d, reinterpret_cast<const hwy::bfloat16_t*>(p));
}
template <class D>
HWY_INLINE hn::Vec<D> LoadF32(D d, const hwy::float16_t* p) {
#if ACLNN_CPU_HW_F16
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), p));
#else
  // Highway 1.0.3's software promotion reads exponent 31 as a normal exponent (+-inf became
  // +-65536, NaN a finite value): decoded here from the bits, exact for every f16.
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint16_t, D> du16;
  const auto h = hn::PromoteTo(du, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
  const auto exp = hn::And(hn::ShiftRight<10>(h), hn::Set(du, 0x1Fu));
  const auto mant = hn::And(h, hn::Set(du, 0x3FFu));
  const auto normal =
      hn::Or(hn::ShiftLeft<23>(hn::Add(exp, hn::Set(du, 112u))), hn::ShiftLeft<13>(mant));
  const auto special = hn::Or(hn::Set(du, 0x7F800000u), hn::ShiftLeft<13>(mant));  // inf, NaN
  const auto bits = hn::IfThenElse(hn::Eq(exp, hn::Set(du, 0x1Fu)), special, normal);
  // Zero and subnormals: mant * 2^-24, exact in f32.
  const auto small =
      hn::Mul(hn::ConvertTo(d, hn::BitCast(di, mant)), hn::Set(d, 1.0f / 16777216.0f));
  const auto magnitude =
      hn::IfThenElse(hn::RebindMask(d, hn::Eq(exp, hn::Zero(du))), small, hn::BitCast(d, bits));
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  return hn::Or(magnitude, hn::BitCast(d, sign));
#endif
}

template <class D>
HWY_INLINE void StoreF32(D d, hn::Vec<D> v, double* p) {
  hn::StoreU(v, d, p);
}
template <class D>
HWY_INLINE void StoreF32(D d, hn::Vec<D> v, float* p) {
  hn::StoreU(v, d, p);
}

// f32 lanes rounded to nearest even to bf16, which is in the upper 16 bits of each u32 lane
// (NaN stays NaN).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Bf16InUpperBits(D /*d*/, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lsb));
  const auto quiet = hn::Or(bits, hn::Set(du, 0x00400000u));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet, rounded);
}

template <class D>
HWY_INLINE void StoreF32(D d, hn::Vec<D> v, hwy::bfloat16_t* p) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint16_t, D> du16;
  const auto hi = hn::BitCast(di, hn::ShiftRight<16>(Bf16InUpperBits(d, v)));  // fits u16
  hn::StoreU(hn::DemoteTo(du16, hi), du16, reinterpret_cast<uint16_t*>(p));
}

#if ACLNN_CPU_HW_BF16
// Whether any lane of a full f32 vector is subnormal (vfpclassps, AVX512DQ).
HWY_INLINE bool AnySubnormal(hn::Vec512<float> v) {
  return _mm512_fpclass_ps_mask(v.raw, 0x20) != 0;
}
// 16 f32 lanes to 16 bf16 lanes by vcvtneps2bf16 (no subnormal lane).
HWY_INLINE hn::Vec256<uint16_t> Bf16ByHardware(hn::Vec512<float> v) {
  __m256i r;
  asm("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(v.raw));
  return hn::Vec256<uint16_t>{r};
}
// 2 x 16 f32 lanes to 32 bf16 lanes, lo's first, by vcvtne2ps2bf16 (no subnormal lane).
HWY_INLINE hn::Vec512<uint16_t> Bf16PairByHardware(hn::Vec512<float> lo, hn::Vec512<float> hi) {
  __m512i r;
  asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(r) : "v"(hi.raw), "v"(lo.raw));
  return hn::Vec512<uint16_t>{r};
}
#endif

template <class D>
HWY_INLINE void StoreF32(D d, hn::Vec<D> v, Bf16Hw* p) {
#if ACLNN_CPU_HW_BF16
  if constexpr (hn::MaxLanes(D()) == 16) {
    if (HWY_LIKELY(!AnySubnormal(v))) {
      hn::StoreU(Bf16ByHardware(v), hn::Full256<uint16_t>(), reinterpret_cast<uint16_t*>(p));
      return;
    }
  }
#endif
  StoreF32(d, v, reinterpret_cast<hwy::bfloat16_t*>(p));
}

// `d` is unused where the hardware converts (AArch64 NEON/SVE: GCC's -Wunused-parameter).
template <class D>
HWY_INLINE void StoreF32([[maybe_unused]] D d, hn::Vec<D> v, hwy::float16_t* p) {
#if ACLNN_CPU_HW_F16
  // Hardware conversion (vcvtps2ph / fcvtn) rounds to nearest even.
  const hn::Rebind<hwy::float16_t, D> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, p);
#else
  HWY_ALIGN float tmp[hn::MaxLanes(D())];
  hn::Store(v, d, tmp);
  for (size_t i = 0; i < hn::Lanes(d); ++i) {
    const uint16_t h = FloatToFp16(tmp[i]);
    std::memcpy(p + i, &h, 2);
  }
#endif
}

// e^x for any f32 x with IEEE edges: +inf above ln(FLT_MAX), NaN for NaN, subnormal results
// kept, 0 below -104. Highway's Exp (1 ulp) alone returns 0 for NaN and is undefined above 104.
template <class D>
HWY_INLINE hn::Vec<D> ExpEdges(D d, hn::Vec<D> x) {
  auto y = hn::Exp(d, x);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283935546875f)), hn::Set(d, HUGE_VALF), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// e^x on [-86.5, 88]: n = round(x / ln 2), r = x - n ln 2 (two FMA steps, Cody-Waite), Cephes'
// degree-6 polynomial for e^r, and 2^n added to the exponent field. n is rounded by adding
// 1.5 * 2^23 (the sum's low mantissa bits are then n in two's complement, ready to shift into
// the exponent field): two operations where rounding and converting took eight on AVX-512
// (vrndscaleps, vcvttps2dq and Highway's out-of-range fix-up). Max error within 2 ulp (tests
// bound it).
template <class D>
HWY_INLINE hn::Vec<D> ExpFast(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const auto magic = hn::Set(d, 12582912.0f);  // 1.5 * 2^23
  const auto t = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), magic);
  const auto n = hn::Sub(t, magic);
  auto r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  auto p = hn::Set(d, 1.9875691500e-4f);
  p = hn::MulAdd(p, r, hn::Set(d, 1.3981999507e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 8.3334519073e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.1665795894e-2f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.6666665459e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 5.0000001201e-1f));
  p = hn::MulAdd(p, hn::Mul(r, r), hn::Add(r, hn::Set(d, 1.0f)));
  const auto e = hn::ShiftLeft<23>(hn::BitCast(di, t));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, p), e));
}

// e^x on [-707, 709] in f64 lanes, ExpFast's scheme: n = round(x / ln 2) by adding 1.5 * 2^52;
// r + r_lo = x - n ln 2 (Cody-Waite: ln 2's high part has 32 bits, so n times it is exact also
// where MulAdd is a multiply and an add); e^r = 1 + r + r^2 q(r), q of degree 9 (a Chebyshev fit
// of (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], 0.07 ulp: tools/exp_f64_coefficients.py) by Estrin's
// scheme, 1 + r split exactly (Fast2Sum) so that only the final addition rounds at the result's
// scale; 2^n added to the exponent field (the result stays normal: n >= -1020). About 30 operations
// and half the dependent latency of Highway's Exp, whose int32 conversions and two-factor scaling
// left the f64 row kernels compute-bound at 0.8 G elements/s per core. Within 1 ulp (tests bound
// it). kHalvings > 0 returns e^x / 2^kHalvings (for n up to 1023 + kHalvings).
template <int kHalvings = 0, class D>
HWY_INLINE hn::Vec<D> ExpFastF64(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const auto magic = hn::Set(d, 0x1.8p52), one = hn::Set(d, 1.0);
  const auto ln2_lo = hn::Set(d, 0x1.a39ef35793c76p-33);
  const auto t = hn::MulAdd(x, hn::Set(d, 0x1.71547652b82fep0), magic);
  const auto n = hn::Sub(t, magic);
  const auto r_hi = hn::NegMulAdd(n, hn::Set(d, 0x1.62e42feep-1), x);  // exact
  const auto r = hn::NegMulAdd(n, ln2_lo, r_hi);
  const auto r_lo = hn::NegMulAdd(n, ln2_lo, hn::Sub(r_hi, r));
  const auto r2 = hn::Mul(r, r);
  const auto r4 = hn::Mul(r2, r2);
  const auto r8 = hn::Mul(r4, r4);
  const auto a0 = hn::MulAdd(hn::Set(d, 0x1.5555555555556p-3), r, hn::Set(d, 0x1.0000000000001p-1));
  const auto a1 = hn::MulAdd(hn::Set(d, 0x1.11111111109b3p-7), r, hn::Set(d, 0x1.5555555553d63p-5));
  const auto a2 =
      hn::MulAdd(hn::Set(d, 0x1.a01a01a7c41d5p-13), r, hn::Set(d, 0x1.6c16c1788bd90p-10));
  const auto a3 =
      hn::MulAdd(hn::Set(d, 0x1.71de0dae63bb3p-19), r, hn::Set(d, 0x1.a019b90d2ae7ap-16));
  const auto a4 =
      hn::MulAdd(hn::Set(d, 0x1.af38a9b0ec855p-26), r, hn::Set(d, 0x1.289185613a3d6p-22));
  const auto b0 = hn::MulAdd(a1, r2, a0);
  const auto b1 = hn::MulAdd(a3, r2, a2);
  const auto q = hn::MulAdd(a4, r8, hn::MulAdd(b1, r4, b0));
  const auto hi = hn::Add(one, r);
  const auto lo = hn::Add(hn::Sub(one, hi), r);  // 1 + r = hi + lo exactly (|r| < 1)
  const auto p = hn::Add(hi, hn::MulAdd(r2, q, hn::Add(lo, r_lo)));
  const auto e = hn::ShiftLeft<52>(hn::Sub(hn::BitCast(di, t), hn::Set(di, kHalvings)));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, p), e));
}

// e^x for any f64 x with IEEE edges: Highway's Exp (1 ulp) on its range, +inf above
// ln(DBL_MAX), 0 below -746 (the last subnormal's log is -744.4), NaN for NaN. The path of a
// vector with a lane outside ExpFastF64's range.
template <class D>
HWY_INLINE hn::Vec<D> ExpEdgesF64(D d, hn::Vec<D> x) {
  const auto in = hn::And(hn::Ge(x, hn::Set(d, -746.0)), hn::Le(x, hn::Set(d, 709.0)));
  auto y = hn::Exp(d, hn::IfThenElse(in, x, hn::Zero(d)));
  y = hn::IfThenElse(in, y,
                     hn::IfThenElse(hn::Gt(x, hn::Zero(d)), hn::Set(d, HUGE_VAL), hn::Zero(d)));
  // Between 709 and ln(DBL_MAX) = 709.78 (n up to 1024): e^x / 2 by ExpFastF64, doubled.
  const auto top = hn::And(hn::Gt(x, hn::Set(d, 709.0)), hn::Le(x, hn::Set(d, 709.782712893384)));
  y = hn::IfThenElse(top, hn::Add(ExpFastF64<1>(d, x), ExpFastF64<1>(d, x)), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// e^x for any f32 x: the fast path where every lane is in its range (NaN is not), otherwise
// lane by lane the edge-correct path. Each lane's value depends on its own x only. With
// kNotPositive the caller guarantees x <= 0 or NaN (x - max), and only the lower bound is
// checked. f64 lanes: ExpFastF64, or ExpEdgesF64 where a lane is outside its range.
template <bool kNotPositive = false, class D>
HWY_INLINE hn::Vec<D> ExpF(D d, hn::Vec<D> x) {
  if constexpr (std::is_same_v<hn::TFromD<D>, double>) {
    const auto low = hn::Ge(x, hn::Set(d, -707.0));
    const auto fast = kNotPositive ? low : hn::And(low, hn::Le(x, hn::Set(d, 709.0)));
    const auto y = ExpFastF64(d, x);
    if (HWY_LIKELY(hn::AllTrue(d, fast))) return y;
    return hn::IfThenElse(fast, y, ExpEdgesF64(d, x));
  } else {
    const auto low = hn::Ge(x, hn::Set(d, -86.5f));
    const auto fast = kNotPositive ? low : hn::And(low, hn::Le(x, hn::Set(d, 88.0f)));
    const auto y = ExpFast(d, x);
    if (HWY_LIKELY(hn::AllTrue(d, fast))) return y;
    return hn::IfThenElse(fast, y, ExpEdges(d, x));
  }
}

// Runs body(i, count) over [0, n) in whole vectors; the final partial vector (count < Lanes)
// is staged through `pad`-filled local buffers by the caller-provided body.
template <class D, class Body>
HWY_INLINE void ForEachVector(D d, size_t n, Body&& body) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) body(i, N);
  if (i < n) body(i, n - i);
}

// Copies `count` (< Lanes) elements to a full-vector local buffer padded with `pad`.
template <class T>
HWY_INLINE void StagePartial(const T* src, size_t count, T* buf, size_t lanes, T pad) {
  for (size_t j = 0; j < lanes; ++j) buf[j] = pad;
  std::memcpy(buf, src, count * sizeof(T));
}

template <class T>
HWY_INLINE T PadValue(float v);
template <>
HWY_INLINE double PadValue<double>(float v) {
  return v;
}
template <>
HWY_INLINE float PadValue<float>(float v) {
  return v;
}
template <>
HWY_INLINE hwy::bfloat16_t PadValue<hwy::bfloat16_t>(float v) {
  hwy::bfloat16_t r;
  r.bits = FloatToBf16(v);
  return r;
}
template <>
HWY_INLINE Bf16Hw PadValue<Bf16Hw>(float v) {
  return Bf16Hw{FloatToBf16(v)};
}
template <>
HWY_INLINE hwy::float16_t PadValue<hwy::float16_t>(float v) {
  hwy::float16_t r;
  const uint16_t h = FloatToFp16(v);
  std::memcpy(&r, &h, 2);
  return r;
}

// Loads Lanes elements at p[i..] as f32, or `count` (< Lanes) elements padded with `pad`.
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadPartialF32(D d, const T* p, size_t count, float pad) {
  if (hn::MaxLanes(d) == 1 || count == hn::Lanes(d)) return LoadF32(d, p);
  HWY_ALIGN T buf[hn::MaxLanes(D())];
  StagePartial(p, count, buf, hn::Lanes(d), PadValue<T>(pad));
  return LoadF32(d, buf);
}

// Stores Lanes (or count < Lanes) f32 values converted to T.
template <class D, class T>
HWY_INLINE void StorePartialF32(D d, hn::Vec<D> v, T* p, size_t count) {
  if (hn::MaxLanes(d) == 1 || count == hn::Lanes(d)) return StoreF32(d, v, p);
  HWY_ALIGN T buf[hn::MaxLanes(D())];
  StoreF32(d, v, buf);
  std::memcpy(p, buf, count * sizeof(T));
}

// v rounded to f32 to odd (a value between two floats becomes the one whose last bit is 1: a
// later rounding to a 16-bit type then rounds once, as from v), as DoubleToFloatRoundToOdd:
// exact values, NaN and overflow to infinity as the nearest rounding gives them. The neighbour
// towards zero with its last bit set is the odd one of the two.
template <class DD, class DF>
HWY_INLINE hn::Vec<DF> DemoteToOdd(DD dd, DF df, hn::Vec<DD> v) {
  const hn::RebindToUnsigned<DD> du64;
  const hn::Rebind<uint32_t, DD> du32;
  const auto f = hn::DemoteTo(df, v);
  const auto back = hn::PromoteTo(dd, f);
  const auto u = hn::PromoteTo(du64, hn::BitCast(du32, f));
  const auto inexact = hn::AndNot(hn::Or(hn::IsNaN(v), hn::IsInf(back)), hn::Ne(back, v));
  const auto one = hn::Set(du64, uint64_t{1});
  const auto toward_zero =
      hn::IfThenElse(hn::RebindMask(du64, hn::Gt(hn::Abs(back), hn::Abs(v))), hn::Sub(u, one), u);
  const auto odd = hn::IfThenElse(hn::RebindMask(du64, inexact), hn::Or(toward_zero, one), u);
  return hn::BitCast(df, hn::TruncateTo(du32, odd));
}

// Stores c lanes of v (f64) to the compute type C: rounded to nearest f32, or to odd. (The
// f32 half-width vector is staged by hand where partial: LoadPartialF32's staging assumes a
// full tag.)
template <class C, bool kOdd = false, class DD>
HWY_INLINE void StoreCompute(DD dd, hn::Vec<DD> v, C* p, size_t c) {
  if constexpr (std::is_same_v<C, double>) {
    StorePartialF32(dd, v, p, c);
  } else {
    const hn::Rebind<float, DD> df;
    const auto f = kOdd ? DemoteToOdd(dd, df, v) : hn::DemoteTo(df, v);
    if (c == hn::Lanes(dd)) {
      hn::StoreU(f, df, p);
    } else {
      HWY_ALIGN float buf[hn::MaxLanes(DD())];
      hn::StoreU(f, df, buf);
      std::memcpy(p, buf, c * sizeof(float));
    }
  }
}

// c values of the compute type C as f64 lanes, `pad` in the others.
template <class C, class DD>
HWY_INLINE hn::Vec<DD> LoadCompute(DD dd, const C* p, size_t c, double pad) {
  if constexpr (std::is_same_v<C, double>) {
    return LoadPartialF32(dd, p, c, static_cast<float>(pad));
  } else {
    const hn::Rebind<float, DD> df;
    if (c == hn::Lanes(dd)) return hn::PromoteTo(dd, hn::LoadU(df, p));
    HWY_ALIGN float buf[hn::MaxLanes(DD())];
    for (size_t i = 0; i < hn::Lanes(dd); ++i) buf[i] = i < c ? p[i] : static_cast<float>(pad);
    return hn::PromoteTo(dd, hn::LoadU(df, buf));
  }
}

// Streams the aligned output vector at out + i: one f32 vector, or for 16-bit outputs two f32
// vectors rounded into one vector of 16-bit lanes, packed in registers (a round trip through a
// stack buffer would make the wide load wait on two narrower stores).
template <class D, class Compute>
HWY_INLINE void StreamOutputVector(D d, float* out, size_t i, Compute& compute) {
  hn::Stream(compute(i, hn::Lanes(d)), d, out + i);
}
template <class D, class Compute>
HWY_INLINE void StreamOutputVector(D d, double* out, size_t i, Compute& compute) {
  hn::Stream(compute(i, hn::Lanes(d)), d, out + i);
}
// (Not on HWY_SCALAR, which has no ConcatOdd/Combine and never streams: one-lane vectors.)
#if HWY_TARGET != HWY_SCALAR
// Two f32 vectors rounded to one vector of bf16 lanes, lo's first (integer operations).
template <class D>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, D>> Bf16PairBySoftware(D d, hn::Vec<D> lo,
                                                                    hn::Vec<D> hi) {
  const hn::Repartition<uint16_t, D> du16;
  return hn::ConcatOdd(du16, hn::BitCast(du16, Bf16InUpperBits(d, hi)),
                       hn::BitCast(du16, Bf16InUpperBits(d, lo)));
}
template <class D, class Compute>
HWY_INLINE void StreamOutputVector(D d, hwy::bfloat16_t* out, size_t i, Compute& compute) {
  const auto lo = compute(i, hn::Lanes(d));
  const auto hi = compute(i + hn::Lanes(d), hn::Lanes(d));
  hn::Stream(Bf16PairBySoftware(d, lo, hi), hn::Repartition<uint16_t, D>(),
             reinterpret_cast<uint16_t*>(out + i));
}
template <class D, class Compute>
HWY_INLINE void StreamOutputVector(D d, Bf16Hw* out, size_t i, Compute& compute) {
#if ACLNN_CPU_HW_BF16
  if constexpr (hn::MaxLanes(D()) == 16) {
    const auto lo = compute(i, hn::Lanes(d));
    const auto hi = compute(i + hn::Lanes(d), hn::Lanes(d));
    const bool hw = HWY_LIKELY(!AnySubnormal(lo) && !AnySubnormal(hi));
    hn::Stream(hw ? Bf16PairByHardware(lo, hi) : Bf16PairBySoftware(d, lo, hi),
               hn::Full512<uint16_t>(), reinterpret_cast<uint16_t*>(out + i));
    return;
  }
#endif
  StreamOutputVector(d, reinterpret_cast<hwy::bfloat16_t*>(out), i, compute);
}
template <class D, class Compute>
HWY_INLINE void StreamOutputVector(D d, hwy::float16_t* out, size_t i, Compute& compute) {
  const size_t N = hn::Lanes(d);
  const hn::Repartition<uint16_t, D> du16;
#if ACLNN_CPU_HW_F16
  const hn::Rebind<hwy::float16_t, D> dh;
  const hn::Rebind<uint16_t, D> dhu;
  const auto lo = hn::BitCast(dhu, hn::DemoteTo(dh, compute(i, N)));
  const auto hi = hn::BitCast(dhu, hn::DemoteTo(dh, compute(i + N, N)));
  hn::Stream(hn::Combine(du16, hi, lo), du16, reinterpret_cast<uint16_t*>(out + i));
#else
  HWY_ALIGN hwy::float16_t pair[2 * hn::MaxLanes(D())];
  StoreF32(d, compute(i, N), pair);
  StoreF32(d, compute(i + N, N), pair + N);
  hn::Stream(hn::Load(du16, reinterpret_cast<const uint16_t*>(pair)), du16,
             reinterpret_cast<uint16_t*>(out + i));
#endif
}
#endif  // HWY_TARGET != HWY_SCALAR

// Computes and stores out[0, n): compute(i, count) returns the f32 vector for elements
// [i, i + count). With `stream`, the aligned body uses non-temporal stores (large outputs that
// no consumer finds in cache anyway; the caller runs hwy::FlushStream() before publishing).
template <class D, class T, class Compute>
HWY_INLINE void ForEachOutputVector(D d, T* out, size_t n, bool stream, Compute&& compute) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
  if constexpr (hn::MaxLanes(D()) > 1) {
    if (stream && addr % sizeof(T) == 0) {
      // Aligned whole output vectors of U elements are streamed; 16-bit outputs take two f32
      // vectors per store (half-vector streaming stores ran at half the bandwidth).
      const size_t U = sizeof(T) == 2 ? 2 * N : N;
      const size_t mis = (addr % (U * sizeof(T))) / sizeof(T);
      const size_t head = mis == 0 ? 0 : (U - mis < n ? U - mis : n);
      for (; i + N <= head; i += N) StoreF32(d, compute(i, N), out + i);
      if (i < head) {
        StorePartialF32(d, compute(i, head - i), out + i, head - i);
        i = head;
      }
      for (; i + U <= n; i += U) StreamOutputVector(d, out, i, compute);
    }
  }
  for (; i + N <= n; i += N) StoreF32(d, compute(i, N), out + i);
  if (i < n) StorePartialF32(d, compute(i, n - i), out + i, n - i);
}

// Deterministic sum of f(x) over n elements: f32 (f64 for double) vector partials over fixed
// blocks of kSumBlock elements, blocks combined in order in double. The error is bounded by the
// block, not by n.
constexpr size_t kSumBlock = 512;

template <class T, class F>
HWY_INLINE double BlockedSum(const T* x, size_t n, float pad, F&& f) {
  const CTag<T> d;
  double total = 0.0;
  for (size_t b = 0; b < n; b += kSumBlock) {
    const size_t len = n - b < kSumBlock ? n - b : kSumBlock;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d);
    const T* p = x + b;
    const size_t N = hn::Lanes(d);
    size_t i = 0;
    for (; i + 2 * N <= len; i += 2 * N) {
      a0 = hn::Add(a0, f(LoadF32(d, p + i)));
      a1 = hn::Add(a1, f(LoadF32(d, p + i + N)));
    }
    for (; i < len; i += N) {
      const size_t c = len - i < N ? len - i : N;
      a0 = hn::Add(a0, f(LoadPartialF32(d, p + i, c, pad)));
    }
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1))));
  }
  return total;
}

}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
