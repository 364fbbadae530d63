// Row kernels (see row_kernels.h), compiled for every Highway target by foreach_target.
#include "kernels/row_kernels.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/row_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {

// Software prefetch of the element `pf` elements past p + i (pf == 0: none), into L1 or, with
// kLocality 2, into L2 only (the next row, which the following kernel call reads). Prefetches
// never fault; the address is formed as an integer because it may lie past the row.
template <int kLocality = 3, class T>
HWY_INLINE void PrefetchAhead(const T* p, size_t i, size_t pf) {
  if (pf != 0) {
    __builtin_prefetch(
        reinterpret_cast<const T*>(reinterpret_cast<uintptr_t>(p + i) + pf * sizeof(T)), 0,
        kLocality);
  }
}

// The prefetch distance of the loops that compute an exp per element read from memory, in
// elements of T (PrefetchBytes() in row_kernels.h says why).
template <class T>
HWY_INLINE size_t PrefetchElements() {
  return static_cast<size_t>(PrefetchBytes()) / sizeof(T);
}

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

template <class T>
void CeGradT(const T* lp, T* out, size_t n, double shift, double a, double b, const ComputeT<T>* w,
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

template <class T>
double DotT(const T* x, const ComputeT<T>* w, size_t n, double m) {
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

// Column tile: rows walked in order in both sweeps; column sums in L1 arrays.
constexpr size_t kColBlockRows = 256;

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

// Keeps v where row r is column j's true class t[j].
template <class D, class V = hn::Vec<D>>
HWY_INLINE V PickRow(D d, V picked, V v, size_t r, V tj) {
  return hn::IfThenElse(hn::Eq(tj, hn::Set(d, static_cast<hn::TFromD<D>>(r))), v, picked);
}

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
  GatherTrueClass(x, rows, cols, sx, t, xt_out);
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
  HWY_ALIGN C acc_lanes[kPad], cnt_lanes[kPad];
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
      hn::Store(acc, d, acc_lanes);
      hn::Store(cnt, d, cnt_lanes);
      for (size_t i = 0; i < c; ++i) {
        rest[j + i] += static_cast<double>(acc_lanes[i]);
        count[j + i] += static_cast<double>(cnt_lanes[i]);
      }
    }
  });
  GatherTrueClass(x, rows, cols, sx, t, xt_out);
  // l = log(k) + log1p(rest / k), LogSumExpShifted's formula in f64 lanes; NaN for a column of
  // -inf (m = -inf, no element counted: as LogSumExpShifted(0, 0)) and wherever rest is NaN.
  const hn::ScalableTag<double> dd;
  using VD = hn::Vec<decltype(dd)>;
  ForEachVector(dd, cols, [&](size_t j, size_t c) {
    const VD k = LoadPartialF32(dd, count + j, c, 1.0f);
    const VD q = hn::Div(LoadPartialF32(dd, rest + j, c, 0.0f), k);
    const VD l = hn::Add(hn::Log(dd, k), hn::Log1p(dd, q));
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
void WidenT(const T* x, size_t n, ComputeT<T>* out) {
  const CTag<T> d;
  const size_t pf = PrefetchElements<T>();
  ForEachVector(d, n, [&](size_t i, size_t c) {
    PrefetchAhead(x, i, pf);
    StorePartialF32(d, LoadPartialF32(d, x + i, c, 0.0f), out + i, c);
  });
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
