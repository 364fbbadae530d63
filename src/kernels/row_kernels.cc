// Row kernels (see row_kernels.h), compiled for every Highway target by foreach_target.
#include "kernels/row_kernels.h"

#include <cmath>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/row_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ce_cols-inl.h"
#include "kernels/tile-inl.h"
#include "simd/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {

template <class T>
double SumT(const T* x, size_t n) {
  return BlockedSum(x, n, 0.0f, [](auto v) { return v; });
}

// Longest row whose successor lsm_bwd prefetches: two such rows fit in a 1 MiB L2 with room.
constexpr size_t kNextRowPrefetchBytes = 256 << 10;

template <class T>
void LsmBwdT(const T* g, const T* y, double s, T* out, size_t n, bool stream) {
  using C = ComputeT<T>;
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const V vs = hn::Set(d, static_cast<C>(s));
  const size_t pf = PrefetchElements<T>();  // y comes from memory; g from cache (summed before)
  // g's next row (n elements on, where rows are contiguous) goes to L2 while this row computes:
  // its sum, the next call's first sweep, then reads it from cache instead of stalling on memory
  // while the exp units idle (measured on an Intel Xeon, docs/performance.md). Not for rows
  // too long to keep two in L2.
  const size_t next = pf != 0 && n * sizeof(T) <= kNextRowPrefetchBytes ? n : 0;
  ForEachOutputVector(d, out, n, stream, [&](size_t i, size_t c) {
    PrefetchAhead(y, i, pf);
    PrefetchAhead<2>(g, i, next);
    const V vg = LoadPartialF32(d, g + i, c, 0.0f);
    const V vy = LoadPartialF32(d, y + i, c, 0.0f);
    return hn::NegMulAdd(ExpF(d, vy), vs, vg);
  });
}

template <class T>
ComputeT<T> MaxT(const T* x, size_t n) {
  using C = ComputeT<T>;
  const CTag<T> d;
  auto m = hn::Set(d, static_cast<C>(-HUGE_VAL));
  ForEachVector(
      d, n, [&](size_t i, size_t c) { m = hn::Max(m, LoadPartialF32(d, x + i, c, -HUGE_VALF)); });
  // The lanes folded here, not by MaxOfLanes: Highway 1.0.3's EMU128 reduction starts from
  // -FLT_MAX, so an empty or all -inf row gave -FLT_MAX there and -inf on every other target.
  HWY_ALIGN C lanes[hn::MaxLanes(d)];
  hn::Store(m, d, lanes);
  C r = static_cast<C>(-HUGE_VAL);
  for (size_t i = 0; i < hn::Lanes(d); ++i)
    r = (lanes[i] > r || lanes[i] != lanes[i]) ? lanes[i] : r;
  return r;
}

// Adds exp(x - m) over [p, p + len) (len <= kSumBlock) to *total, leaving out the elements
// equal to a finite m, which are counted in *count: one block of sum_exp. m is the maximum of
// the elements (sum_exp's contract), so with m finite x - m <= 0 or NaN, and an element equal to
// m is finite. pf: prefetch distance in elements.
template <class T>
HWY_INLINE void BlockSumExp(const T* p, size_t len, ComputeT<T> m, double* total, double* count,
                            size_t pf) {
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const V vm = hn::Set(d, m);
  V acc = hn::Zero(d);
  if (std::isfinite(m)) {
    size_t cnt = 0;
    ForEachVector(d, len, [&](size_t i, size_t c) {
      PrefetchAhead(p, i, pf);
      const V v = LoadPartialF32(d, p + i, c, -HUGE_VALF);  // pad: exp(-inf) = 0
      const auto at_max = hn::Eq(v, vm);
      acc = hn::Add(acc, hn::IfThenZeroElse(at_max, ExpF<true>(d, hn::Sub(v, vm))));
      cnt += hn::CountTrue(d, at_max);
    });
    *count += static_cast<double>(cnt);
  } else {
    // m = +inf or NaN (the sum is NaN) or -inf (every element -inf): nothing equals a finite m.
    ForEachVector(d, len, [&](size_t i, size_t c) {
      acc = hn::Add(acc, ExpF(d, hn::Sub(LoadPartialF32(d, p + i, c, -HUGE_VALF), vm)));
    });
  }
  *total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc)));
}

template <class T>
double SumExpT(const T* x, size_t n, double m, double* k) {
  double total = 0.0, count = 0.0;
  const size_t pf = PrefetchElements<T>();
  for (size_t b = 0; b < n; b += kSumBlock) {
    BlockSumExp(x + b, n - b < kSumBlock ? n - b : kSumBlock, static_cast<ComputeT<T>>(m), &total,
                &count, pf);
  }
  *k = count;
  return total;
}

// One pass: each block's maximum first (the block then sits in L1 for its exponentials); when
// the running maximum rises, what was summed so far is rescaled in double. A running maximum of
// -inf means every element so far was -inf: they add exp(-inf) = 0, so their block is skipped.
// Elements whose maximum max_sum_exp takes at once: 8 summation blocks (16 KiB of f32, in L1
// for the exponentials that follow). While a block's exponentials are computed, the next block
// is prefetched (unless PrefetchBytes() is 0), so that memory and the exp overlap.
constexpr size_t kMaxBlock = 8 * kSumBlock;

template <class T>
double MaxSumExpT(const T* x, size_t n, double* max, double* k) {
  using C = ComputeT<T>;
  C m = static_cast<C>(-HUGE_VAL);
  double total = 0.0, count = 0.0;
  const size_t pf = PrefetchBytes() != 0 ? kMaxBlock : 0;
  for (size_t b = 0; b < n; b += kMaxBlock) {
    const size_t len = n - b < kMaxBlock ? n - b : kMaxBlock;
    const C mb = MaxT(x + b, len);
    if (mb > m || mb != mb) {
      // The old maximum's elements now add exp(m - mb) each (0 when m = -inf; NaN when mb is).
      total = (total + count) * std::exp(static_cast<double>(m) - static_cast<double>(mb));
      count = 0.0;
      m = mb;
    }
    if (m == static_cast<C>(-HUGE_VAL)) continue;
    for (size_t s = 0; s < len; s += kSumBlock) {
      BlockSumExp(x + b + s, len - s < kSumBlock ? len - s : kSumBlock, m, &total, &count, pf);
    }
  }
  *max = m;
  *k = count;
  return total;
}

template <class T>
void LsmFwdT(const T* x, double m, double l, T* out, size_t n, bool stream) {
  using C = ComputeT<T>;
  const CTag<T> d;
  const auto vm = hn::Set(d, static_cast<C>(m)), vl = hn::Set(d, static_cast<C>(l));
  ForEachOutputVector(d, out, n, stream, [&](size_t i, size_t c) {
    return hn::Sub(hn::Sub(LoadPartialF32(d, x + i, c, 0.0f), vm), vl);
  });
}

// W: the weights' type, the compute type (ce_grad) or T itself (ce_grad_t).
template <class T, class W>
void CeGradT(const T* lp, T* out, size_t n, double shift, double a, double b, const W* w,
             bool stream) {
  using C = ComputeT<T>;
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const V va = hn::Set(d, static_cast<C>(a)), vb = hn::Set(d, static_cast<C>(b)),
          vs = hn::Set(d, static_cast<C>(shift));
  const size_t pf = PrefetchElements<T>();
  ForEachOutputVector(d, out, n, stream, [&](size_t i, size_t c) {
    PrefetchAhead(lp, i, pf);
    // lp - 0 is lp exactly (signed zeros, infinities and NaN included).
    const V p = ExpF(d, hn::Sub(LoadPartialF32(d, lp + i, c, 0.0f), vs));
    const V wj = w != nullptr ? LoadPartialF32(d, w + i, c, 0.0f) : hn::Set(d, C{1});
    return hn::NegMulAdd(vb, wj, hn::Mul(p, va));
  });
}

// W as CeGradT's: dot or dot_t.
template <class T, class W>
double DotT(const T* x, const W* w, size_t n, double m) {
  using C = ComputeT<T>;
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const V vm = hn::Set(d, static_cast<C>(m));
  double total = 0.0;
  for (size_t b = 0; b < n; b += kSumBlock) {
    const size_t len = n - b < kSumBlock ? n - b : kSumBlock;
    V acc = hn::Zero(d);
    ForEachVector(d, len, [&](size_t i, size_t c) {
      // Padding lanes of a partial vector contribute exactly 0.
      const V xs =
          hn::IfThenElseZero(hn::FirstN(d, c), hn::Sub(LoadPartialF32(d, x + b + i, c, 0.0f), vm));
      const V wj = w != nullptr ? LoadPartialF32(d, w + b + i, c, 0.0f) : hn::Set(d, C{1});
      acc = hn::MulAdd(xs, wj, acc);
    });
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc)));
  }
  return total;
}

template <class T>
void LsmBwdColsT(const T* g, const T* y, T* out, size_t rows, size_t cols, size_t sg, size_t sy,
                 size_t so, bool stream) {
  using C = ComputeT<T>;
  const CTag<T> d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN C block[kMaxTileCols];
  // A vector may start anywhere in the row (the store's alignment decides) and run past cols.
  HWY_ALIGN C sums[kMaxTileCols + hn::MaxLanes(d)] = {};
  double total[kMaxTileCols] = {};
  for (size_t r0 = 0; r0 < rows; r0 += kColBlockRows) {
    const size_t r1 = rows - r0 < kColBlockRows ? rows : r0 + kColBlockRows;
    for (size_t j = 0; j < cols; j += N) hn::Store(hn::Zero(d), d, block + j);
    for (size_t r = r0; r < r1; ++r) {
      ForEachVector(d, cols, [&](size_t j, size_t c) {
        hn::Store(hn::Add(hn::Load(d, block + j), LoadPartialF32(d, g + r * sg + j, c, 0.0f)), d,
                  block + j);
      });
    }
    for (size_t j = 0; j < cols; ++j) total[j] += static_cast<double>(block[j]);
  }
  for (size_t j = 0; j < cols; ++j) sums[j] = static_cast<C>(total[j]);
  // y comes from memory: its rows `ahead` rows on (about PrefetchBytes() ahead) are prefetched.
  const size_t pf = PrefetchElements<T>();
  const size_t ahead = pf / cols > 1 ? pf / cols : 1;
  for (size_t r = 0; r < rows; ++r) {
    const size_t pf_r = pf != 0 && r + ahead < rows ? ahead * sy : 0;
    const T* gr = g + r * sg;
    const T* yr = y + r * sy;
    ForEachOutputVector(d, out + r * so, cols, stream, [&](size_t j, size_t c) {
      PrefetchAhead(yr, j, pf_r);
      const auto vg = LoadPartialF32(d, gr + j, c, 0.0f);
      const auto vy = LoadPartialF32(d, yr + j, c, 0.0f);
      return hn::NegMulAdd(ExpF(d, vy), hn::LoadU(d, sums + j), vg);
    });
  }
}

template <class T>
void WidenT(const T* x, size_t n, ComputeT<T>* out) {
  const CTag<T> d;
  const size_t pf = PrefetchElements<T>();
  ForEachVector(d, n, [&](size_t i, size_t c) {
    PrefetchAhead(x, i, pf);
    StorePartialF32(d, LoadPartialF32(d, x + i, c, 0.0f), out + i, c);
  });
}

// Non-template entry points, one set per dtype of float_types.inc.
#define ACLNN_FLOAT_TYPE(S, E, T)                                                                  \
  double Sum_##S(const void* x, size_t n) { return SumT(static_cast<const T*>(x), n); }            \
  void LsmBwd_##S(const void* g, const void* y, double s, void* out, size_t n, bool st) {          \
    LsmBwdT(static_cast<const T*>(g), static_cast<const T*>(y), s, static_cast<T*>(out), n, st);   \
  }                                                                                                \
  double Max_##S(const void* x, size_t n) { return MaxT(static_cast<const T*>(x), n); }            \
  double SumExp_##S(const void* x, size_t n, double m, double* k) {                                \
    return SumExpT(static_cast<const T*>(x), n, m, k);                                             \
  }                                                                                                \
  double MaxSumExp_##S(const void* x, size_t n, double* m, double* k) {                            \
    return MaxSumExpT(static_cast<const T*>(x), n, m, k);                                          \
  }                                                                                                \
  void LsmFwd_##S(const void* x, double m, double l, void* out, size_t n, bool st) {               \
    LsmFwdT(static_cast<const T*>(x), m, l, static_cast<T*>(out), n, st);                          \
  }                                                                                                \
  void CeGrad_##S(const void* lp, void* out, size_t n, double sh, double a, double b,              \
                  const void* w, bool st) {                                                        \
    CeGradT(static_cast<const T*>(lp), static_cast<T*>(out), n, sh, a, b,                          \
            static_cast<const ComputeT<T>*>(w), st);                                               \
  }                                                                                                \
  double Dot_##S(const void* x, const void* w, size_t n, double m) {                               \
    return DotT(static_cast<const T*>(x), static_cast<const ComputeT<T>*>(w), n, m);               \
  }                                                                                                \
  void CeGradSame_##S(const void* lp, void* out, size_t n, double sh, double a, double b,          \
                      const void* w, bool st) {                                                    \
    CeGradT(static_cast<const T*>(lp), static_cast<T*>(out), n, sh, a, b,                          \
            static_cast<const T*>(w), st);                                                         \
  }                                                                                                \
  double DotSame_##S(const void* x, const void* w, size_t n, double m) {                           \
    return DotT(static_cast<const T*>(x), static_cast<const T*>(w), n, m);                         \
  }                                                                                                \
  void LsmBwdCols_##S(const void* g, const void* y, void* out, size_t rows, size_t cols,           \
                      size_t sg, size_t sy, size_t so, bool st) {                                  \
    LsmBwdColsT(static_cast<const T*>(g), static_cast<const T*>(y), static_cast<T*>(out), rows,    \
                cols, sg, sy, so, st);                                                             \
  }                                                                                                \
  void CeStatsCols_##S(const void* x, size_t rows, size_t cols, size_t sx, const void* w,          \
                       const void* t, double* m, double* l, double* xt, double* dot) {             \
    CeStatsColsT(static_cast<const T*>(x), rows, cols, sx, static_cast<const ComputeT<T>*>(w),     \
                 static_cast<const ComputeT<T>*>(t), m, l, xt, dot);                               \
  }                                                                                                \
  void CePickCols_##S(const void* x, size_t rows, size_t cols, size_t sx, const void* t,           \
                      const double* lse, double* xt) {                                             \
    CePickColsT(static_cast<const T*>(x), rows, cols, sx, static_cast<const ComputeT<T>*>(t), lse, \
                xt);                                                                               \
  }                                                                                                \
  void CeGradCols_##S(const void* x, void* out, size_t rows, size_t cols, size_t sx, size_t so,    \
                      const void* sh, const void* a, const void* b, const void* w, const void* t,  \
                      const void* tc, bool st) {                                                   \
    using CT = ComputeT<T>;                                                                        \
    CeGradColsT(static_cast<const T*>(x), static_cast<T*>(out), rows, cols, sx, so,                \
                static_cast<const CT*>(sh), static_cast<const CT*>(a), static_cast<const CT*>(b),  \
                static_cast<const CT*>(w), static_cast<const CT*>(t), static_cast<const CT*>(tc),  \
                st);                                                                               \
  }                                                                                                \
  void Widen_##S(const void* x, size_t n, void* out) {                                             \
    WidenT(static_cast<const T*>(x), n, static_cast<ComputeT<T>*>(out));                           \
  }                                                                                                \
  void CeCoefCols_##S(size_t cols, const CeCoefConstants& k, const void* t, const double* w,       \
                      const double* g, const double* gz, const double* lse, const double* p,       \
                      void* sh, void* a, void* b, void* tv, void* tc) {                            \
    using CT = ComputeT<T>;                                                                        \
    CeCoefColsT<T>(cols, k, static_cast<const CT*>(t), w, g, gz, lse, p, static_cast<CT*>(sh),     \
                   static_cast<CT*>(a), static_cast<CT*>(b), static_cast<CT*>(tv),                 \
                   static_cast<CT*>(tc));                                                          \
  }
#include "kernels/float_types.inc"
#undef ACLNN_FLOAT_TYPE

bool HasHardwareBf16() { return ACLNN_CPU_HW_BF16 != 0; }

}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "hwy/cache_control.h"
#include "simd/dispatch.h"

namespace aclnn_cpu {

#define ACLNN_EXPORT_KERNEL(member, Prefix, S) HWY_EXPORT(Prefix##_##S);
#define ACLNN_FLOAT_TYPE(S, E, T) ACLNN_ROW_KERNELS(ACLNN_EXPORT_KERNEL, S)
#include "kernels/float_types.inc"
#undef ACLNN_FLOAT_TYPE
#undef ACLNN_EXPORT_KERNEL
HWY_EXPORT(HasHardwareBf16);

void FlushStreamingStores() { hwy::FlushStream(); }

RowKernels GetRowKernels(aclDataType t) {
  InitDispatch();
  RowKernels k;
  // BF16 through the AVX512_BF16 instructions where the CPU and the chosen target have them.
  const bool hw_bf16 = HardwareConversionsOn() && ACLNN_DYNAMIC_POINTER(HasHardwareBf16)();
#define ACLNN_SET_KERNEL(member, Prefix, S) k.member = ACLNN_DYNAMIC_POINTER(Prefix##_##S);
#define ACLNN_FLOAT_TYPE(S, E, T)                                          \
  if (t == E && std::is_same_v<T, Bf16Hw> == (t == ACL_BF16 && hw_bf16)) { \
    k.dtype = #S;                                                          \
    ACLNN_ROW_KERNELS(ACLNN_SET_KERNEL, S)                                 \
  }
#include "kernels/float_types.inc"
#undef ACLNN_FLOAT_TYPE
#undef ACLNN_SET_KERNEL
  return k;
}

}  // namespace aclnn_cpu
#endif  // HWY_ONCE
