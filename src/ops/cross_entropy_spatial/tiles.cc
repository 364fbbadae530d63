#include "ops/cross_entropy_spatial/tiles.h"

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "ops/common/strided.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"

namespace aclnn_cpu {
namespace ce_spatial {
namespace {

// Bytes of input a tile holds at most: its later sweeps read it from L1/L2.
constexpr int64_t kTileBytes = 64 << 10;
constexpr int64_t kMinTileCols = 16;

// What the target scan of one work item found.
struct ItemScan {
  double d = 0.0, m = 0.0;  // sums of the weights of its targets, and their number
  int64_t bad = -1;         // its first bad position (flat index), or -1
  int64_t bad_t = 0;        // the value there
};

}  // namespace

TensorDesc AsPositions(const TensorDesc& p, const TensorDesc& input) {
  TensorDesc v = input;
  v.dtype = p.dtype;
  v.data = p.data;
  v.strides[0] = p.strides[0];
  v.strides[1] = 0;
  for (int d = 2; d < input.rank; ++d) v.strides[d] = p.strides[d - 1];
  return v;
}

TilePlan::TilePlan(const char* op, const ce::Common& k, const TensorDesc& x,
                   const TensorDesc* const* ops, int nops, int target_op, const TensorDesc* out)
    : op_(op), k_(k), x_(x), target_op_(target_op) {
  geo_ = MakeSliceGeometry(ops, nops, 1);
  dtype_ = x_.dtype;
  compute_ = ComputeDtype(dtype_);
  kernels_ = GetRowKernels(dtype_);
  threads_ = NumThreads();
  last_ = geo_.ndims - 1;
  inner_ = last_ >= 0 ? geo_.sizes[last_] : 1;
  // Column tiles where the positions' innermost dim is contiguous in the input and in `out`
  // (the last operand); otherwise one position at a time (correct, not fast).
  columns_ = last_ >= 0 && geo_.strides[0][last_] == 1 &&
             (out == nullptr || geo_.strides[nops - 1][last_] == 1);
  const int64_t esz = DtypeSize(dtype_);
  int64_t t = kTileBytes / std::max<int64_t>(k_.c * esz, 1);
  t = std::clamp<int64_t>(t / kMinTileCols * kMinTileCols, kMinTileCols,
                          static_cast<int64_t>(kMaxTileCols));
  tile_ = columns_ ? std::min(t, inner_) : 1;
  tiles_per_outer_ = (inner_ + tile_ - 1) / tile_;
  items_ = inner_ > 0 ? geo_.num_slices / inner_ * tiles_per_outer_ : 0;
  const uint64_t cs = static_cast<uint64_t>(DtypeSize(compute_));
  if (k_.has_weight) weights_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(k_.c));
  scans_ = booker_.Book<ItemScan>(static_cast<uint64_t>(items_));
  target_name_ = CurrentTargetName();
  plain_ = k_.soc.family == SocFamily::kCpu && !k_.has_weight;
}

Status TilePlan::Scan(void* workspace, int threads, void** w, ce::TargetScan* scan) const {
  unsigned char* wc = k_.has_weight ? Grant<unsigned char>(workspace, weights_) : nullptr;
  scan->w_sum = ce::CopyWeights(k_.has_weight ? &k_.weight : nullptr, k_.c, compute_, wc);
  *w = wc;
  ItemScan* items = Grant<ItemScan>(workspace, scans_);
  const TensorDesc& tg = k_.target;
  const int64_t ignore = k_.ignore_index;
  ParallelFor(items_, threads, MinItemsPerThread(), [&](int, int64_t b, int64_t e) {
    int64_t off[kMaxOperands];
    for (int64_t it = b; it < e; ++it) {
      int64_t slice, cols;
      Tile(it, &slice, &cols);
      geo_.SliceOffsets(slice, off);
      ItemScan s;
      int64_t cls[kMaxTileCols];
      GatherIndices(tg.dtype, tg.data + off[target_op_] * DtypeSize(tg.dtype),
                    ColumnStride(target_op_), cols, cls);
      if (plain_) {
        // The default rule without weights: counts, and a bad target only flagged here (the
        // loop below finds which), branch-free.
        int64_t kept = 0;
        bool bad = false;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t t = cls[j];
          const bool ignored = t == ignore;
          const bool in_range = static_cast<uint64_t>(t) < static_cast<uint64_t>(k_.c);
          kept += !ignored && in_range;
          bad |= !ignored && !in_range;
        }
        if (!bad) {
          s.d = s.m = static_cast<double>(kept);
          items[it] = s;
          continue;
        }
      }
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t t = cls[j];
        if (ce::IsIgnoredTarget(k_.soc.family, t, k_.ignore_index)) continue;
        if (t < 0 || t >= k_.c) {
          if (s.bad < 0) {
            s.bad = slice + j;
            s.bad_t = t;
          }
          continue;
        }
        s.d += ce::WeightAt(wc, compute_, t);
        s.m += 1.0;
      }
      items[it] = s;
    }
  });
  double d = 0.0, m = 0.0;
  for (int64_t it = 0; it < items_; ++it) {
    if (items[it].bad >= 0) {
      return ce::BadTargetError(op_, k_.soc, items[it].bad, items[it].bad_t, k_.ignore_index, k_.c);
    }
    d += items[it].d;
    m += items[it].m;
  }
  const bool mean = k_.reduction == ce::Reduction::kMean;
  scan->d = mean ? d : 1.0;
  scan->m = mean ? m : 1.0;
  return OkStatus();
}

void TilePlan::TileTargets(const int64_t* off, int64_t cols, const void* w, int64_t* cls,
                           double* wt, void* t) const {
  const TensorDesc& tg = k_.target;
  GatherIndices(tg.dtype, tg.data + off[target_op_] * DtypeSize(tg.dtype), ColumnStride(target_op_),
                cols, cls);
  if (plain_) {
    // The default rule without weights, branch-free (the loop runs once per position): the
    // selects in integer masks, which GCC had turned back into a mispredicted branch.
    const int64_t ignore = k_.ignore_index;
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t ignored = -static_cast<int64_t>(cls[j] == ignore);  // 0 or all ones
      cls[j] |= ignored;                                                // -1 where ignored
      wt[j] = static_cast<double>(ignored + 1);                         // 0 where ignored
    }
  } else {
    for (int64_t j = 0; j < cols; ++j) {
      if (ce::IsIgnoredTarget(k_.soc.family, cls[j], k_.ignore_index)) cls[j] = -1;
      wt[j] = cls[j] >= 0 ? ce::WeightAt(w, compute_, cls[j]) : 0.0;
    }
  }
  // Class indices are below 2^24 (validated), exact in either compute type; through int32,
  // which converts without the int64 conversion's dependency-breaking zeroing.
  if (compute_ == ACL_DOUBLE) {
    double* td = static_cast<double*>(t);
    for (int64_t j = 0; j < cols; ++j) td[j] = static_cast<double>(static_cast<int32_t>(cls[j]));
  } else {
    float* tf = static_cast<float*>(t);
    for (int64_t j = 0; j < cols; ++j) tf[j] = static_cast<float>(static_cast<int32_t>(cls[j]));
  }
}

std::string TilePlan::Common(const char* what) const {
  return StrFormat(
      "%s, K-dimensional: N %lld, C %lld, %lld positions, %s, reduction %s, weight %s, ls %g, "
      "z-loss %g, path %s of %lld positions, kernels %s, target %s, up to %d threads",
      what, static_cast<long long>(k_.n), static_cast<long long>(k_.c),
      static_cast<long long>(geo_.num_slices), DtypeName(dtype_), ce::ReductionName(k_.reduction),
      k_.has_weight ? "yes" : "no", k_.label_smoothing, k_.zloss_scale,
      columns_ ? "column tiles" : "single positions", static_cast<long long>(tile_), kernels_.dtype,
      target_name_, threads_);
}

}  // namespace ce_spatial
}  // namespace aclnn_cpu
