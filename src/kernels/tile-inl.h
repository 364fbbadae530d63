// What the row kernels' loops share (per Highway target, included by row_kernels.cc and
// kernels/ce_cols-inl.h): software prefetch and the column tiles' summation block and totals.
#if defined(ACLNN_CPU_KERNELS_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ACLNN_CPU_KERNELS_TILE_INL_H_
#undef ACLNN_CPU_KERNELS_TILE_INL_H_
#else
#define ACLNN_CPU_KERNELS_TILE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/row_kernels.h"
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

// Column tile: rows walked in order in both sweeps; column sums in L1 arrays.
constexpr size_t kColBlockRows = 256;

// dst[i] += v[i] in double for i < c (c <= Lanes(d)): a column block's partial sums added to
// the columns' totals. A whole vector of f32 lanes is promoted a half at a time (the loop over
// lanes that GCC made of it cost a sixth of ce_stats_cols' exp sweep on 21 rows); the same
// double additions either way.
template <class D>
HWY_INLINE void AddToDoubles(D d, hn::Vec<D> v, double* dst, size_t c) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same_v<T, double>) {
    if (c == hn::Lanes(d)) return hn::StoreU(hn::Add(hn::LoadU(d, dst), v), d, dst);
  }
#if HWY_TARGET != HWY_SCALAR
  if constexpr (!std::is_same_v<T, double>) {
    if (c == hn::Lanes(d)) {
      const hn::Half<D> dh;
      const hn::Rebind<double, decltype(dh)> dd;
      const size_t h = hn::Lanes(dd);
      hn::StoreU(hn::Add(hn::LoadU(dd, dst), hn::PromoteTo(dd, hn::LowerHalf(dh, v))), dd, dst);
      hn::StoreU(hn::Add(hn::LoadU(dd, dst + h), hn::PromoteTo(dd, hn::UpperHalf(dh, v))), dd,
                 dst + h);
      return;
    }
  }
#endif
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  for (size_t i = 0; i < c; ++i) dst[i] += static_cast<double>(lanes[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
