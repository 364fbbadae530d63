// Runs a per-slice function over a SliceGeometry on the operator threads.
#ifndef ACLNN_CPU_OPS_COMMON_SLICES_H_
#define ACLNN_CPU_OPS_COMMON_SLICES_H_

#include <algorithm>
#include <cstdint>

#include "runtime/parallel.h"
#include "tensor/geometry.h"

namespace aclnn_cpu {

// Elements below which an extra thread is not worth its fork.
constexpr int64_t kMinElementsPerThread = 32768;

// Rows longer than this are summed in chunks of this many elements (chunk sums added in order
// in double) whatever the thread count, so that a row can be split across threads when there
// are fewer rows than threads without changing a bit of the result.
constexpr int64_t kRowChunk = 16384;

inline int64_t RowChunks(int64_t len) { return (len + kRowChunk - 1) / kRowChunk; }

// fn(thread_index, offsets) for every slice; offsets[k] is operand k's element offset.
// Slices are split into contiguous ranges, so each slice's result is independent of threads.
template <typename F>
void ForEachSliceParallel(const SliceGeometry& geo, int threads, F&& fn) {
  const int64_t min_slices =
      std::max<int64_t>(1, kMinElementsPerThread / std::max<int64_t>(geo.axis_len, 1));
  ParallelFor(geo.num_slices, threads, min_slices, [&](int tid, int64_t b, int64_t e) {
    int64_t off[kMaxOperands];
    for (int64_t s = b; s < e; ++s) {
      geo.SliceOffsets(s, off);
      fn(tid, off);
    }
  });
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_SLICES_H_
