// Runs a per-slice function over a SliceGeometry on the operator threads.
#ifndef ACLNN_CPU_OPS_COMMON_SLICES_H_
#define ACLNN_CPU_OPS_COMMON_SLICES_H_

#include <algorithm>
#include <cstdint>

#include "kernels/row_kernels.h"
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

// Rows of `len` elements a thread takes at least (so a fork is worth it).
inline int64_t MinRowsPerThread(int64_t len) {
  return std::max<int64_t>(1, kMinElementsPerThread / std::max<int64_t>(len, 1));
}

// Whether `rows` contiguous rows of `len` elements are split into kRowChunk chunks across the
// threads: only when there are fewer rows than threads and a row has more than one chunk.
inline bool SplitRowsAcrossThreads(int64_t rows, int64_t len, int threads) {
  return rows < threads && RowChunks(len) > 1;
}

// fn(row, item, c0, chunk_len) for every (row, chunk) work item of `rows` rows of `len`
// elements, items (row * RowChunks(len) + chunk) split over the threads; with
// `flush_streaming`, each thread orders its non-temporal stores before it finishes.
template <typename F>
void ForEachRowChunkParallel(int64_t rows, int64_t len, int threads, bool flush_streaming, F&& fn) {
  const int64_t nc = RowChunks(len);
  ParallelFor(rows * nc, threads, 1, [&](int, int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t c0 = (it % nc) * kRowChunk;
      fn(it / nc, it, c0, std::min(kRowChunk, len - c0));
    }
    if (flush_streaming) FlushStreamingStores();
  });
}

// fn(thread_index, offsets) for every slice; offsets[k] is operand k's element offset.
// Slices are split into contiguous ranges, so each slice's result is independent of threads.
template <typename F>
void ForEachSliceParallel(const SliceGeometry& geo, int threads, F&& fn) {
  ParallelFor(geo.num_slices, threads, MinRowsPerThread(geo.axis_len),
              [&](int tid, int64_t b, int64_t e) {
                int64_t off[kMaxOperands];
                for (int64_t s = b; s < e; ++s) {
                  geo.SliceOffsets(s, off);
                  fn(tid, off);
                }
              });
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_SLICES_H_
