// The machinery the K-dimensional cross-entropy plans share (plan.cc): the geometry of positions
// of an (N, C, d1, ..., dK) input, their column tiles (a tile of adjacent positions along the
// innermost contiguous dim, a class per row), the work items (outer index, tile), the weight
// copy, the target scan and each tile's targets, and the per-position operands' columns.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_TILES_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_TILES_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/cross_entropy.h"
#include "ops/common/slices.h"
#include "ops/common/strided.h"
#include "runtime/executor.h"
#include "tensor/geometry.h"

namespace aclnn_cpu {
namespace ce_spatial {

// A per-position tensor (N, d1, ..., dK) as a view of the input's shape (N, C, d1, ..., dK)
// with class stride 0, so that one SliceGeometry (a slice per position) walks them all.
TensorDesc AsPositions(const TensorDesc& p, const TensorDesc& input);

// A tile's targets as TilePlan::TileTargets gives them, and the input at each true class:
// the forward's tile hands them to the gradient's in the one-pass plan.
struct TileTargetColumns {
  int64_t* cls;
  double* wt;
  void* t;
  double* xt;
};

// Shared by the plans: the geometry of positions (operand 0 is the input or logits), their
// column tiles, the weight copy and the target scan. Work items are (outer index, tile) and
// depend on the shape alone, so every sum over items is in a fixed order.
class TilePlan : public Plan {
 protected:
  // ops: the geometry's operands, the input first; `out`: an output of the input's shape whose
  // innermost stride must also be 1 for column tiles (nullable).
  TilePlan(const char* op, const ce::Common& k, const TensorDesc& x, const TensorDesc* const* ops,
           int nops, int target_op, const TensorDesc* out);

  // Item it's first slice (position) and its number of columns.
  void Tile(int64_t it, int64_t* slice, int64_t* cols) const {
    const int64_t o = it / tiles_per_outer_, j0 = (it % tiles_per_outer_) * tile_;
    *slice = o * inner_ + j0;
    *cols = std::min(tile_, inner_ - j0);
  }
  int64_t MinItemsPerThread() const {
    return std::max<int64_t>(1, kMinElementsPerThread / std::max<int64_t>(k_.c * tile_, 1));
  }

  // Copies the weights, checks every target (the first bad one in position order is the error;
  // nothing is written then) and sums the mean's divisors in item order.
  Status Scan(void* workspace, int threads, void** w, ce::TargetScan* scan) const;

  // Operand k's element stride from one column of a tile to the next.
  int64_t ColumnStride(int k) const { return last_ >= 0 ? geo_.strides[k][last_] : 0; }

  // The tile's targets (operand offsets `off`, `cols` columns): cls[j] = the class or -1 for an
  // ignored position (the scan has checked every one), wt[j] its weight (0 if ignored), and
  // t[j] = cls[j] in the compute type (the kernels' row index).
  void TileTargets(const int64_t* off, int64_t cols, const void* w, int64_t* cls, double* wt,
                   void* t) const;
  // Column values of operand k (a per-position tensor `d`) into doubles, and back.
  void LoadColumn(int k, const TensorDesc& d, const int64_t* off, int64_t cols, double* v) const {
    GatherF64(d.dtype, d.data + off[k] * DtypeSize(d.dtype), ColumnStride(k), cols, v);
  }
  void StoreColumn(int k, const TensorDesc& d, const int64_t* off, int64_t cols,
                   const double* v) const {
    ScatterF64(d.dtype, v, d.data + off[k] * DtypeSize(d.dtype), ColumnStride(k), cols);
  }

  std::string Common(const char* what) const;

  const char* op_;
  const ce::Common k_;
  TensorDesc x_;
  int target_op_;
  SliceGeometry geo_;
  aclDataType dtype_ = ACL_FLOAT, compute_ = ACL_FLOAT;
  RowKernels kernels_;
  int threads_ = 1, last_ = -1;
  bool columns_ = false;
  // The default profile's ignore rule (t == ignoreIndex) and no class weights: the scans'
  // branch-free loops.
  bool plain_ = false;
  int64_t inner_ = 1, tile_ = 1, tiles_per_outer_ = 1, items_ = 0;
  WorkspaceBooker booker_;
  WorkspaceBooking weights_, scans_;
  const char* target_name_ = "";
};

}  // namespace ce_spatial
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_TILES_H_
