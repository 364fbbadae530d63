#include "ops/cross_entropy_spatial/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/cross_entropy.h"
#include "ops/common/slices.h"
#include "ops/common/strided.h"
#include "ops/cross_entropy_spatial/tiles.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/geometry.h"

namespace aclnn_cpu {
namespace ce_spatial {
namespace {

// v where keep, else +0.0, without a branch: the bits masked (a branch there mispredicts on
// scattered ignored positions: the lean forward's position loop fell from 10.7% to 9.0% of the
// driver's samples without it, 8x21x512x512 f32, one position in seven ignored).
inline double KeepIf(bool keep, double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  b &= uint64_t{0} - static_cast<uint64_t>(keep);
  std::memcpy(&v, &b, sizeof v);
  return v;
}

class WithGradPlan;

// The lean forward: each position's lse (always written) and loss terms, reduced in item order.
// Operands: 0 input, 1 target, 2 lse, then (reduction "none") 3 loss and, when returned, 4 zloss.
class LsePlan final : public TilePlan {
 public:
  explicit LsePlan(const ce_fwd::Checked& c, const TensorDesc* const* ops, int nops)
      : TilePlan(c.op, c, c.input, ops, nops, 1, nullptr),
        loss_(c.loss),
        zloss_(c.zloss),
        lse_(c.lse),
        return_zloss_(c.return_zloss) {
    terms_ = booker_.Book<ce::LossTerms>(static_cast<uint64_t>(items_));
    stats_ = booker_.Book<double>(static_cast<uint64_t>(threads_) * kColumns *
                                  static_cast<uint64_t>(tile_));
  }

  static std::unique_ptr<LsePlan> Make(const ce_fwd::Checked& c) {
    const TensorDesc target = AsPositions(c.target, c.input), lse = AsPositions(c.lse, c.input),
                     loss = AsPositions(c.loss, c.input), zl = AsPositions(c.zloss, c.input);
    const TensorDesc* ops[] = {&c.input, &target, &lse, &loss, &zl};
    const bool none = c.reduction == ce::Reduction::kNone;
    return std::make_unique<LsePlan>(c, ops, none ? (c.return_zloss ? 5 : 4) : 3);
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(geo_.num_slices * k_.c * DtypeSize(dtype_));
  }
  std::string Describe() const override { return Common("lean (no logProb)"); }

  Status Run(void* workspace) const override {
    const int threads = std::min(threads_, NumThreads());
    void* w = nullptr;
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(Scan(workspace, threads, &w, &scan));
    auto* terms = Grant<ce::LossTerms>(workspace, terms_);
    double* stats = Grant<double>(workspace, stats_);
    ParallelFor(items_, threads, MinItemsPerThread(), [&](int tid, int64_t b, int64_t e) {
      double* m = stats + static_cast<int64_t>(tid) * kColumns * tile_;
      for (int64_t it = b; it < e; ++it) terms[it] = RunTile(it, w, scan.w_sum, m);
    });
    Reduce(terms, scan);
    return OkStatus();
  }

 private:
  friend class WithGradPlan;

  // The reduced loss (and z-loss) from the items' sums, added in item order.
  void Reduce(const ce::LossTerms* terms, const ce::TargetScan& scan) const {
    if (k_.reduction == ce::Reduction::kNone) return;
    ce::LossTerms sum;
    for (int64_t it = 0; it < items_; ++it) {
      sum.nll += terms[it].nll;
      sum.smooth += terms[it].smooth;
      sum.zl += terms[it].zl;
    }
    const bool mean = k_.reduction == ce::Reduction::kMean;
    const double loss = mean ? ce::MeanLoss(sum, k_.label_smoothing, k_.c, scan)
                             : ce::CombineLoss(sum, k_.label_smoothing, k_.c);
    StoreFromDouble(loss_.dtype, loss_.data, 0, loss);
    if (return_zloss_)
      StoreFromDouble(zloss_.dtype, zloss_.data, 0, mean ? sum.zl / scan.m : sum.zl);
  }

  // Per-thread columns of a tile (doubles): m, l, xt, dot, lse, loss, z-loss, weights, the
  // classes (int64) and the kernels' row indices (compute type; 8 bytes each at most).
  static constexpr int64_t kColumns = 10;

  // One tile's statistics (and the input at each true class), then each position's lse and
  // loss terms (written for "none"); returns the tile's sums of the terms in position order.
  // `to`, where given (the one-pass plan), receives the tile's targets and the input at each
  // true class in place of the per-thread columns.
  ce::LossTerms RunTile(int64_t it, const void* w, double w_sum, double* m,
                        const TileTargetColumns* to = nullptr) const {
    int64_t slice, cols;
    Tile(it, &slice, &cols);
    int64_t off[kMaxOperands];
    geo_.SliceOffsets(slice, off);
    double *l = m + tile_, *xt = l + tile_, *dot = xt + tile_, *lse = dot + tile_;
    double *loss = lse + tile_, *zl = loss + tile_, *wt = zl + tile_;
    int64_t* cls = reinterpret_cast<int64_t*>(wt + tile_);
    void* t = cls + tile_;
    if (to != nullptr) {
      cls = to->cls;
      wt = to->wt;
      t = to->t;
      xt = to->xt;
    }
    TileTargets(off, cols, w, cls, wt, t);
    const bool smoothing = k_.label_smoothing != 0.0;
    const int64_t esz = DtypeSize(dtype_);
    kernels_.ce_stats_cols(x_.data + off[0] * esz, static_cast<size_t>(k_.c),
                           static_cast<size_t>(cols), static_cast<size_t>(geo_.axis_stride[0]), w,
                           t, m, l, xt, smoothing ? dot : nullptr);
    // The sums in locals (registers: a chain through memory cost ~10 cycles a position), the
    // per-position loss only for "none"; CombineLoss's factors hoisted (the same expression).
    const bool none = k_.reduction == ce::Reduction::kNone;
    const double zscale = k_.zloss_scale, keep = 1.0 - k_.label_smoothing,
                 spread = k_.label_smoothing / static_cast<double>(k_.c);
    double nll = 0.0, smooth = 0.0, zsum = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      const double lj = m[j] + l[j];
      const bool kept = cls[j] >= 0;
      lse[j] = lj;
      const double kn = KeepIf(kept, -wt[j] * (xt[j] - lj));
      // As ce_fwd: sum_c w_c (x_c - lse) = dot - log_s * W, only with smoothing.
      const double ks = smoothing ? KeepIf(kept, -(dot[j] - l[j] * w_sum)) : 0.0;
      const double kz = KeepIf(kept, zscale * lj * lj);
      if (none) {
        loss[j] = keep * kn + spread * ks + kz;
        zl[j] = kz;
      }
      nll += kn;
      smooth += ks;
      zsum += kz;
    }
    ce::LossTerms sum;
    sum.nll = nll;
    sum.smooth = smooth;
    sum.zl = zsum;
    StoreColumn(2, lse_, off, cols, lse);
    if (k_.reduction == ce::Reduction::kNone) {
      StoreColumn(3, loss_, off, cols, loss);
      if (return_zloss_) StoreColumn(4, zloss_, off, cols, zl);
    }
    return sum;
  }

  TensorDesc loss_, zloss_, lse_;
  bool return_zloss_ = false;
  WorkspaceBooking terms_, stats_;
};

// The gradient from logits: per position the coefficients of aclnnCpuCrossEntropyLossGrad's
// formula (ce::GradCoefficients), the tile by ce_grad_cols, then the true classes recomputed in
// double and the ignored positions' zeros. Operands: 0 logits, 1 target, 2 lse, then for
// "none" 3 gradLoss and (with the z-loss and gradZloss) 4 gradZloss; the out last.
class GradPlan final : public TilePlan {
 public:
  GradPlan(const ce_grad::Checked& c, const TensorDesc* const* ops, int nops, int grad_op,
           int gz_op)
      : TilePlan(c.op, c, c.log_prob, ops, nops, 1, &c.out),
        out_(c.out),
        grad_(c.grad_loss),
        gz_(c.grad_zloss),
        lse_(c.lse),
        has_gz_(c.has_grad_zloss),
        grad_op_(grad_op),
        gz_op_(gz_op),
        out_op_(nops - 1) {
    const uint64_t cs = static_cast<uint64_t>(DtypeSize(compute_));
    // shift, a, b, t, tc, the picked row indices (compute type); cls (int64); xt, lse, g, gz,
    // wt (doubles).
    const uint64_t per_thread = static_cast<uint64_t>(tile_) * (6 * cs + 8 + 5 * 8);
    tiles_ = booker_.Book<unsigned char>(static_cast<uint64_t>(threads_) * per_thread);
    per_thread_ = per_thread;
    stream_ = columns_ && static_cast<uint64_t>(geo_.num_slices * k_.c * DtypeSize(dtype_)) >=
                              StreamingOutputBytes();
  }

  // unit_grad: c.grad_loss is a scalar 1 whatever the reduction (the with-gradient forward's
  // gradLossOptional left out).
  static std::unique_ptr<GradPlan> Make(const ce_grad::Checked& c, bool unit_grad = false) {
    const TensorDesc target = AsPositions(c.target, c.log_prob),
                     lse = AsPositions(c.lse, c.log_prob);
    const bool none = c.reduction == ce::Reduction::kNone && !unit_grad;
    const bool gz = c.has_grad_zloss && c.zloss_scale != 0.0;
    TensorDesc grad, gzv;
    const TensorDesc* ops[6] = {&c.log_prob, &target, &lse};
    int nops = 3, grad_op = -1, gz_op = -1;
    if (none) {
      grad = AsPositions(c.grad_loss, c.log_prob);
      grad_op = nops;
      ops[nops++] = &grad;
      if (gz) {
        gzv = AsPositions(c.grad_zloss, c.log_prob);
        gz_op = nops;
        ops[nops++] = &gzv;
      }
    }
    ops[nops++] = &c.out;
    return std::make_unique<GradPlan>(c, ops, nops, grad_op, gz_op);
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(geo_.num_slices * k_.c * 2 * DtypeSize(dtype_));
  }
  std::string Describe() const override {
    return Common(stream_ ? "from logits (streaming stores)" : "from logits");
  }

  Status Run(void* workspace) const override {
    const int threads = std::min(threads_, NumThreads());
    void* w = nullptr;
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(Scan(workspace, threads, &w, &scan));
    unsigned char* tiles = Grant<unsigned char>(workspace, tiles_);
    const CeCoefConstants coef = Coefficients(scan);
    ParallelFor(items_, threads, MinItemsPerThread(), [&](int tid, int64_t b, int64_t e) {
      unsigned char* mine = tiles + static_cast<uint64_t>(tid) * per_thread_;
      for (int64_t it = b; it < e; ++it) RunTile(it, w, coef, mine);
      if (stream_) FlushStreamingStores();
    });
    return OkStatus();
  }

 private:
  friend class WithGradPlan;

  CeCoefConstants Coefficients(const ce::TargetScan& scan) const {
    CeCoefConstants coef;
    coef.label_smoothing = k_.label_smoothing;
    coef.zloss_scale = k_.zloss_scale;
    coef.cinv = 1.0 / static_cast<double>(k_.c);
    coef.d = scan.d;
    coef.m = scan.m;
    coef.w_sum = scan.w_sum;
    return coef;
  }

  // The tile's per-column coefficients (shift, a, b: ce_grad_cols'), its true classes t and
  // their values tc (recomputed in double from the input at the true class, which ce_pick_cols
  // reads, before the tile is written: out may be the logits; p is close to 1 there, where f32
  // cancellation would lose the most), and the ignored positions (t = -2, tc = 0: exactly 0
  // whatever the logits), all by ce_coef_cols in f64 lanes (as a scalar loop a position at a
  // time they cost more than the tile's kernel); then the kernel.
  // Where the tile's targets and the input at each true class go in a thread's `mem`.
  TileTargetColumns Targets(unsigned char* mem) const {
    const int64_t cs = DtypeSize(compute_);
    int64_t* cls = reinterpret_cast<int64_t*>(mem + 6 * tile_ * cs);
    double* xt = reinterpret_cast<double*>(cls + tile_);
    return {cls, xt + 4 * tile_, mem + 5 * tile_ * cs, xt};
  }

  // ready: Targets(mem) holds the tile's targets and inputs at the true classes already (the
  // one-pass plan's forward tile put them there).
  void RunTile(int64_t it, const void* w, const CeCoefConstants& coef, unsigned char* mem,
               bool ready = false) const {
    int64_t slice, cols;
    Tile(it, &slice, &cols);
    int64_t off[kMaxOperands];
    geo_.SliceOffsets(slice, off);
    const int64_t cs = DtypeSize(compute_), esz = DtypeSize(dtype_);
    void* shift = mem;
    void* a = mem + tile_ * cs;
    void* s = mem + 2 * tile_ * cs;
    void* tv = mem + 3 * tile_ * cs;
    void* tc = mem + 4 * tile_ * cs;
    const TileTargetColumns tg = Targets(mem);
    void* picked = tg.t;
    int64_t* cls = tg.cls;
    double *xt = tg.xt, *wt = tg.wt;
    double *lse = xt + tile_, *g = lse + tile_, *gz = g + tile_;
    if (!ready) TileTargets(off, cols, w, cls, wt, picked);
    const int64_t sx = geo_.axis_stride[0], so = geo_.axis_stride[out_op_];
    LoadColumn(2, lse_, off, cols, lse);
    // xt: p = exp(x at the true class - lse), in double.
    kernels_.ce_pick_cols(ready ? nullptr : x_.data + off[0] * esz, static_cast<size_t>(k_.c),
                          static_cast<size_t>(cols), static_cast<size_t>(sx), picked, lse, xt);
    const bool z = k_.zloss_scale != 0.0;
    if (grad_op_ >= 0) {
      LoadColumn(grad_op_, grad_, off, cols, g);
    } else {
      std::fill(g, g + cols, LoadAsDouble(grad_.dtype, grad_.data, 0));
    }
    if (z && has_gz_ && gz_op_ >= 0) {
      LoadColumn(gz_op_, gz_, off, cols, gz);
    } else {
      std::fill(gz, gz + cols, z && has_gz_ ? LoadAsDouble(gz_.dtype, gz_.data, 0) : 0.0);
    }
    kernels_.ce_coef_cols(static_cast<size_t>(cols), coef, picked, wt, g, gz, lse, xt, shift, a, s,
                          tv, tc);
    kernels_.ce_grad_cols(x_.data + off[0] * esz, out_.data + off[out_op_] * esz,
                          static_cast<size_t>(k_.c), static_cast<size_t>(cols),
                          static_cast<size_t>(sx), static_cast<size_t>(so), shift, a, s, w, tv, tc,
                          stream_);
  }

  TensorDesc out_, grad_, gz_, lse_;
  bool has_gz_ = false, stream_ = false;
  int grad_op_ = -1, gz_op_ = -1, out_op_ = 0;
  uint64_t per_thread_ = 0;
  WorkspaceBooking tiles_;
};

// The lean forward with the gradient (aclnnCpuCrossEntropyLossWithGrad): per work item the
// forward's tile (its lse stored) and then the gradient's from that lse as stored, while the
// tile is in cache: the bits of the two operators one after the other, the input read from
// memory once. The workspace is the forward plan's, then the gradient plan's. Where their tiles
// differ (a gradOut whose innermost stride is not 1), the two plans run one after the other.
class WithGradPlan final : public Plan {
 public:
  explicit WithGradPlan(const ce_fwd::Checked& c) : fwd_(LsePlan::Make(c)) {
    ce_grad::Checked g;
    static_cast<ce::Common&>(g) = c;
    g.op = c.op;
    g.from_logits = g.spatial = true;
    g.log_prob = c.input;
    g.lse = c.lse;
    g.out = c.grad_out;
    static const double kOne = 1.0;  // gradLossOptional left out: a loss gradient of 1
    if (c.has_grad_loss) {
      g.grad_loss = c.grad_loss;
    } else {
      g.grad_loss.dtype = ACL_DOUBLE;
      g.grad_loss.data = const_cast<char*>(reinterpret_cast<const char*>(&kOne));
    }
    grad_ = GradPlan::Make(g, !c.has_grad_loss);
    // The same positions in tiles of the same width: the same work items.
    fused_ = fwd_->tile_ == grad_->tile_;
    grad_offset_ = fwd_->workspace_bytes();  // a multiple of WorkspaceBooker::kAlign
  }

  uint64_t workspace_bytes() const override { return grad_offset_ + grad_->workspace_bytes(); }
  uint64_t work_bytes() const override { return grad_->work_bytes(); }
  std::string Describe() const override {
    return fwd_->Common(fused_ ? "lean with the gradient, one pass"
                               : "lean with the gradient, two passes (gradOut's tiles differ)");
  }

  Status Run(void* workspace) const override {
    void* grad_ws = static_cast<unsigned char*>(workspace) + grad_offset_;
    if (!fused_) {
      ACLNN_RETURN_IF_ERROR(fwd_->Run(workspace));
      return grad_->Run(grad_ws);
    }
    const int threads = std::min(fwd_->threads_, NumThreads());
    void* w = nullptr;
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(fwd_->Scan(workspace, threads, &w, &scan));
    auto* terms = Grant<ce::LossTerms>(workspace, fwd_->terms_);
    double* stats = Grant<double>(workspace, fwd_->stats_);
    unsigned char* tiles = Grant<unsigned char>(grad_ws, grad_->tiles_);
    const CeCoefConstants coef = grad_->Coefficients(scan);
    const int64_t stats_per_thread = LsePlan::kColumns * fwd_->tile_;
    ParallelFor(fwd_->items_, threads, fwd_->MinItemsPerThread(),
                [&](int tid, int64_t b, int64_t e) {
                  double* m = stats + tid * stats_per_thread;
                  unsigned char* mine = tiles + static_cast<uint64_t>(tid) * grad_->per_thread_;
                  const TileTargetColumns to = grad_->Targets(mine);
                  for (int64_t it = b; it < e; ++it) {
                    terms[it] = fwd_->RunTile(it, w, scan.w_sum, m, &to);
                    grad_->RunTile(it, w, coef, mine, /*ready=*/true);
                  }
                  if (grad_->stream_) FlushStreamingStores();
                });
    fwd_->Reduce(terms, scan);
    return OkStatus();
  }

 private:
  std::unique_ptr<LsePlan> fwd_;
  std::unique_ptr<GradPlan> grad_;
  bool fused_ = false;
  uint64_t grad_offset_ = 0;
};

}  // namespace

std::unique_ptr<Plan> MakeWithGradPlan(const ce_fwd::Checked& c) {
  return c.spatial ? std::make_unique<WithGradPlan>(c) : ce_fwd::MakePlan(c);
}

std::unique_ptr<Plan> MakeLsePlan(const ce_fwd::Checked& c) {
  return c.spatial ? LsePlan::Make(c) : ce_fwd::MakePlan(c);
}

std::unique_ptr<Plan> MakeGradPlan(const ce_grad::Checked& c) {
  return c.spatial ? GradPlan::Make(c) : ce_grad::MakePlan(c);
}

}  // namespace ce_spatial
}  // namespace aclnn_cpu
