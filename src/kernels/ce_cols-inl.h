// The K-dimensional cross-entropy's column-tile kernels (ce_stats_cols, ce_pick_cols,
// ce_grad_cols, ce_coef_cols of row_kernels.h; a class per row, a position per column), per
// Highway target; row_kernels.cc instantiates and dispatches them with the other row kernels.
#if defined(ACLNN_CPU_KERNELS_CE_COLS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ACLNN_CPU_KERNELS_CE_COLS_INL_H_
#undef ACLNN_CPU_KERNELS_CE_COLS_INL_H_
#else
#define ACLNN_CPU_KERNELS_CE_COLS_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/row_kernels.h"
#include "kernels/tile-inl.h"
#include "simd/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {

// Column statistics of a cross-entropy tile (a class per row, a position per column): each
// column's maximum (first sweep, from memory), its sum of exp(x - max) split as sum_exp's (the
// elements at a finite maximum counted apart, later sweeps from cache) and, with `dot`, its
// weighted sum shifted by the maximum. Sums are f32 over blocks of kColBlockRows rows, blocks
// added in order in double, as lsm_bwd_cols. The logarithms in f64 lanes.
// The first sweep goes a row at a time across the tile's columns (the maxima in an L1 array),
// the second a vector of columns at a time down the rows. The second sweep, from cache and bound
// by the exp, prefetches the same row of the next tile into L2 (`cols` elements on: the caller's
// next tile when tiles are adjacent; a wasted prefetch otherwise, which never faults), a line per
// vector: each row of a tile is a short stream the hardware prefetchers barely follow. (Issued
// in a burst from the first sweep, the prefetches left that sweep waiting on memory: the
// forward's kernel samples fell by a sixth when they moved, 8x21x512x512 f32 on an AMD EPYC.)
// 0 (off) with ACLNN_CPU_PREFETCH_BYTES=0.
HWY_INLINE size_t NextTileDistance(size_t cols) { return PrefetchBytes() != 0 ? cols : 0; }

// Column j's element of row t[j] (0 where t[j] < 0): the input at the true class, exact, in
// doubles. A load per column, not a sweep of the tile: the caller's tile is in cache or about
// to be read (the raw elements are gathered, then converted a vector at a time).
template <class T>
void GatherTrueClass(const T* x, size_t rows, size_t cols, size_t sx, const ComputeT<T>* t,
                     double* xt_out) {
  using C = ComputeT<T>;
  const CTag<T> d;
  // A tile without rows has no true class (every t[j] < 0) and no element to read.
  if (rows == 0) {
    for (size_t j = 0; j < cols; ++j) xt_out[j] = 0.0;
    return;
  }
  HWY_ALIGN T raw[kMaxTileCols + hn::MaxLanes(CTag<T>())];
  // Branch-free: a column without a true class loads row 0's element (rows > 0 here) and masks
  // its bits to +0; a branch there mispredicted on ignored positions and serialized the loads.
  using Bits = hwy::UnsignedFromSize<sizeof(T)>;
  for (size_t j = 0; j < cols; ++j) {
    const int64_t r = static_cast<int64_t>(t[j]);
    const uint64_t keep = uint64_t{0} - static_cast<uint64_t>(r >= 0);
    Bits b;
    std::memcpy(&b, x + (static_cast<uint64_t>(r) & keep) * sx + j, sizeof(T));
    b = static_cast<Bits>(b & static_cast<Bits>(keep));
    std::memcpy(raw + j, &b, sizeof(T));
  }
  HWY_ALIGN C lanes[hn::MaxLanes(CTag<T>())];
  ForEachVector(d, cols, [&](size_t j, size_t c) {
    hn::Store(LoadPartialF32(d, raw + j, c, 0.0f), d, lanes);
    for (size_t i = 0; i < c; ++i) xt_out[j + i] = static_cast<double>(lanes[i]);
  });
}

// Column j's element of row t[j] (0 where t[j] < 0): the input at the true class, exact in the
// compute type.
template <class T>
void CePickColsT(const T* x, size_t rows, size_t cols, size_t sx, const ComputeT<T>* t,
                 const double* lse, double* xt_out) {
  if (x != nullptr) GatherTrueClass(x, rows, cols, sx, t, xt_out);
  if (lse == nullptr) return;
  // p = exp(xt - lse) in f64 lanes (ExpF's IEEE edges).
  const hn::ScalableTag<double> dd;
  ForEachVector(dd, cols, [&](size_t j, size_t c) {
    const auto v =
        hn::Sub(LoadPartialF32(dd, xt_out + j, c, 0.0f), LoadPartialF32(dd, lse + j, c, 0.0f));
    StorePartialF32(dd, ExpF(dd, v), xt_out + j, c);
  });
}

// The maximum (first sweep), sum_exp's two parts for it (second sweep, from cache), the input
// at the true class (gathered), the weighted sum (third, with `dot`); sums f32 over blocks of
// kColBlockRows rows, blocks added in order in double, as lsm_bwd_cols'. Then the logarithms in
// f64 lanes.
template <class T>
void CeStatsColsT(const T* x, size_t rows, size_t cols, size_t sx, const ComputeT<T>* w,
                  const ComputeT<T>* t, double* m_out, double* l_out, double* xt_out,
                  double* dot_out) {
  using C = ComputeT<T>;
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const size_t N = hn::Lanes(d);
  constexpr size_t kPad = hn::MaxLanes(CTag<T>());
  HWY_ALIGN C mx[kMaxTileCols + kPad];
  HWY_ALIGN C acc[kMaxTileCols + kPad];
  double rest[kMaxTileCols], count[kMaxTileCols];
  const size_t next = NextTileDistance(cols);
  for (size_t j = 0; j < cols; j += N) hn::Store(hn::Set(d, static_cast<C>(-HUGE_VAL)), d, mx + j);
  for (size_t r = 0; r < rows; ++r) {
    ForEachVector(d, cols, [&](size_t j, size_t c) {
      hn::Store(hn::Max(hn::Load(d, mx + j), LoadPartialF32(d, x + r * sx + j, c, -HUGE_VALF)), d,
                mx + j);
    });
  }
  for (size_t j = 0; j < cols; ++j) {
    m_out[j] = static_cast<double>(mx[j]);
    rest[j] = count[j] = 0.0;
    if (dot_out != nullptr) dot_out[j] = 0.0;
  }
  // The second sweep a vector of columns at a time down the tile's rows (from cache), the
  // column's sums in registers: per column the same f32 additions in the same row order as a
  // row-at-a-time sweep, without an L1 round trip per element.
  const V one = hn::Set(d, C{1});
  ForEachVector(d, cols, [&](size_t j, size_t c) {
    const V vm = hn::Load(d, mx + j);
    const auto finite = hn::IsFinite(vm);
    for (size_t r0 = 0; r0 < rows; r0 += kColBlockRows) {
      const size_t r1 = rows - r0 < kColBlockRows ? rows : r0 + kColBlockRows;
      V acc = hn::Zero(d), cnt = hn::Zero(d);
      for (size_t r = r0; r < r1; ++r) {
        PrefetchAhead<2>(x + r * sx, j, next);
        const V v = LoadPartialF32(d, x + r * sx + j, c, 0.0f);
        // x - m <= 0 or NaN where m is finite or +inf; a column of -inf (m = -inf) gives NaN
        // here and is set apart below.
        const auto at_max = hn::And(hn::Eq(v, vm), finite);
        acc = hn::Add(acc, hn::IfThenZeroElse(at_max, ExpF<true>(d, hn::Sub(v, vm))));
        cnt = hn::Add(cnt, hn::IfThenElseZero(at_max, one));
      }
      AddToDoubles(d, acc, rest + j, c);
      AddToDoubles(d, cnt, count + j, c);
    }
  });
  GatherTrueClass(x, rows, cols, sx, t, xt_out);
  // l = log(k) + log1p(rest / k), LogSumExpShifted's formula in f64 lanes; NaN for a column of
  // -inf (m = -inf, no element counted: as LogSumExpShifted(0, 0)) and wherever rest is NaN.
  const hn::ScalableTag<double> dd;
  using VD = hn::Vec<decltype(dd)>;
  const VD unit = hn::Set(dd, 1.0);
  ForEachVector(dd, cols, [&](size_t j, size_t c) {
    const VD k = LoadPartialF32(dd, count + j, c, 1.0f);
    const VD q = hn::Div(LoadPartialF32(dd, rest + j, c, 0.0f), k);
    // log(k) only for a vector with a tied maximum: log(1) is +0 and +0 + log1p(q) is
    // log1p(q), so the same bits either way (log(k) was a tenth of the forward's kernel).
    VD l = hn::Log1p(dd, q);
    if (HWY_UNLIKELY(!hn::AllTrue(dd, hn::Eq(k, unit)))) l = hn::Add(hn::Log(dd, k), l);
    const auto bad = hn::Or(hn::IsNaN(q), hn::Eq(k, hn::Zero(dd)));
    StorePartialF32(dd, hn::IfThenElse(bad, hn::Set(dd, std::nan("")), l), l_out + j, c);
  });
  if (dot_out == nullptr) return;
  for (size_t r0 = 0; r0 < rows; r0 += kColBlockRows) {
    const size_t r1 = rows - r0 < kColBlockRows ? rows : r0 + kColBlockRows;
    for (size_t j = 0; j < cols; j += N) hn::Store(hn::Zero(d), d, acc + j);
    for (size_t r = r0; r < r1; ++r) {
      const V wr = hn::Set(d, w != nullptr ? w[r] : C{1});
      ForEachVector(d, cols, [&](size_t j, size_t c) {
        const V xs = hn::Sub(LoadPartialF32(d, x + r * sx + j, c, 0.0f), hn::Load(d, mx + j));
        hn::Store(hn::MulAdd(xs, wr, hn::Load(d, acc + j)), d, acc + j);
      });
    }
    for (size_t j = 0; j < cols; ++j) dot_out[j] += static_cast<double>(acc[j]);
  }
}

// out = exp(x - shift[j]) * a[j] - b[j] * w[r] over a tile, row by row (x from memory), with
// row t[j] of column j (every row where t[j] < -1) given tc[j] instead. Prefetching: a narrow
// tile's rows `ahead` rows on (as lsm_bwd_cols); a wide one (a row of at least PrefetchBytes(),
// where that would be the next row only) the same row of the next tile into L2, as
// ce_stats_cols does, so that the next tile's true-class gather (ce_pick_cols, a
// load per column from a row the target picks) and its rows come from cache: from memory that
// gather cost two thirds as much as this kernel (K-dimensional, 21 classes).
template <class T>
void CeGradColsT(const T* x, T* out, size_t rows, size_t cols, size_t sx, size_t so,
                 const ComputeT<T>* shift, const ComputeT<T>* a, const ComputeT<T>* b,
                 const ComputeT<T>* w, const ComputeT<T>* t, const ComputeT<T>* tc, bool stream) {
  using C = ComputeT<T>;
  const CTag<T> d;
  using V = hn::Vec<CTag<T>>;
  const size_t pf = PrefetchElements<T>();
  const bool next_tile = pf != 0 && pf / cols <= 1;
  const size_t ahead = pf / cols > 1 ? pf / cols : 1;
  const V every = hn::Set(d, C{-1.5});
  for (size_t r = 0; r < rows; ++r) {
    const size_t pf_r = next_tile ? cols : pf != 0 && r + ahead < rows ? ahead * sx : 0;
    const T* xr = x + r * sx;
    const V wr = hn::Set(d, w != nullptr ? w[r] : C{1});
    const V row = hn::Set(d, static_cast<C>(r));
    ForEachOutputVector(d, out + r * so, cols, stream, [&](size_t j, size_t c) {
      if (next_tile) {
        PrefetchAhead<2>(xr, j, pf_r);
      } else {
        PrefetchAhead(xr, j, pf_r);
      }
      // Padding lanes: shift 0 and x 0 keep exp finite; they are never stored.
      const V p = ExpF(
          d, hn::Sub(LoadPartialF32(d, xr + j, c, 0.0f), LoadPartialF32(d, shift + j, c, 0.0f)));
      const V g = hn::NegMulAdd(LoadPartialF32(d, b + j, c, 0.0f), wr,
                                hn::Mul(p, LoadPartialF32(d, a + j, c, 0.0f)));
      const V tj = LoadPartialF32(d, t + j, c, -1.0f);
      const auto fixed = hn::Or(hn::Eq(tj, row), hn::Lt(tj, every));
      return hn::IfThenElse(fixed, LoadPartialF32(d, tc + j, c, 0.0f), g);
    });
  }
}

template <class T>
void CeCoefColsT(size_t cols, const CeCoefConstants& k, const ComputeT<T>* t, const double* w,
                 const double* g, const double* gz, const double* lse, const double* p,
                 ComputeT<T>* shift_out, ComputeT<T>* a_out, ComputeT<T>* s_out,
                 ComputeT<T>* tv_out, ComputeT<T>* tc_out) {
  using C = ComputeT<T>;
  constexpr bool kHalf = sizeof(T) == 2;
  const hn::ScalableTag<double> dd;
  using VD = hn::Vec<decltype(dd)>;
  const VD keep = hn::Set(dd, 1.0 - k.label_smoothing), vd = hn::Set(dd, k.d),
           spread = hn::Set(dd, k.label_smoothing * k.cinv), z2 = hn::Set(dd, 2.0 * k.zloss_scale),
           vm = hn::Set(dd, k.m), w_sum = hn::Set(dd, k.w_sum), one = hn::Set(dd, 1.0),
           zero = hn::Zero(dd);
  const bool z = k.zloss_scale != 0.0;
  ForEachVector(dd, cols, [&](size_t j, size_t c) {
    const VD tj = LoadCompute(dd, t + j, c, -1.0);
    const VD wj = LoadPartialF32(dd, w + j, c, 0.0f), gj = LoadPartialF32(dd, g + j, c, 0.0f),
             lj = LoadPartialF32(dd, lse + j, c, 0.0f);
    const auto kept = hn::Ge(tj, zero);
    const VD mf = hn::IfThenElseZero(kept, one);
    // ce::GradCoefficients, operation for operation.
    const VD a = hn::Mul(hn::Div(hn::Mul(gj, keep), vd), wj);
    const VD s = hn::Mul(hn::Mul(hn::Div(gj, vd), spread), mf);
    VD zc = zero;
    if (z) {
      const VD gzj = LoadPartialF32(dd, gz + j, c, 0.0f);
      zc = hn::Div(
          hn::Mul(hn::Mul(hn::Mul(z2, hn::IfThenElseZero(kept, lj)), mf), hn::Add(gj, gzj)), vm);
    }
    const VD big_a = hn::Add(hn::Add(a, hn::Mul(s, w_sum)), zc);
    const auto ignored_zero =
        hn::AndNot(kept, hn::And(hn::And(hn::IsFinite(a), hn::IsFinite(s)), hn::IsFinite(zc)));
    // ce::SplitLse: the lse rounded to f32 as the shift, exp(hi - lse) into a's scale.
    VD hi = lj, scale = one;
    if constexpr (!std::is_same_v<C, double>) {
      const hn::Rebind<float, decltype(dd)> df;
      hi = hn::PromoteTo(dd, hn::DemoteTo(df, lj));
      const VD dl = hn::Sub(hi, lj);
      const auto fin = hn::And(hn::IsFinite(lj), hn::IsFinite(hi));
      const VD poly = hn::Add(
          one,
          hn::Mul(dl, hn::Add(one, hn::Mul(dl, hn::Add(hn::Set(dd, 0.5),
                                                       hn::Mul(dl, hn::Set(dd, 1.0 / 6.0)))))));
      const auto small = hn::Lt(hn::Abs(dl), hn::Set(dd, 0x1p-20));
      VD big = poly;
      if (HWY_UNLIKELY(!hn::AllTrue(dd, hn::Or(small, hn::Not(fin))))) big = ExpF(dd, dl);
      scale = hn::IfThenElse(fin, hn::IfThenElse(small, poly, big), one);
    }
    // ce::TrueClassGrad where the column has a true class.
    const VD pj = LoadPartialF32(dd, p + j, c, 0.0f);
    const VD tc = hn::IfThenElseZero(kept, hn::Sub(hn::Sub(hn::Mul(pj, big_a), hn::Mul(s, wj)), a));
    StoreCompute<C>(dd, hn::IfThenZeroElse(ignored_zero, hi), shift_out + j, c);
    StoreCompute<C>(dd, hn::IfThenZeroElse(ignored_zero, hn::Mul(big_a, scale)), a_out + j, c);
    StoreCompute<C>(dd, hn::IfThenZeroElse(ignored_zero, s), s_out + j, c);
    StoreCompute<C>(dd, hn::IfThenElse(ignored_zero, hn::Set(dd, -2.0), tj), tv_out + j, c);
    StoreCompute<C, kHalf>(dd, tc, tc_out + j, c);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
