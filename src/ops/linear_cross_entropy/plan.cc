#include "ops/linear_cross_entropy/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/softcap.h"
#include "ops/common/strided.h"
#include "ops/cross_entropy_loss/plan.h"
#include "ops/cross_entropy_loss_grad/plan.h"
#include "ops/linear_cross_entropy/matmul.h"
#include "runtime/parallel.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace lce {

namespace {
std::atomic<bool> g_force_f32_products{false};
}  // namespace

void SetForceF32Products(bool on) { g_force_f32_products.store(on); }
bool ForceF32Products() { return g_force_f32_products.load(); }

Bf16Products Bf16ProductsFromEnvironment() {
  const char* env = std::getenv("ACLNN_CPU_BF16_PRODUCTS");
  if (env != nullptr && std::strcmp(env, "f32") == 0) return Bf16Products::kF32;
  if (env != nullptr && std::strcmp(env, "bf16") == 0) return Bf16Products::kBf16;
  return Bf16Products::kAuto;
}

namespace {

TensorDesc Vector(aclDataType t, int64_t n, void* data, int64_t stride = 1) {
  TensorDesc d;
  d.dtype = t;
  d.rank = 1;
  d.shape[0] = n;
  d.strides[0] = stride;
  d.data = static_cast<char*>(data);
  return d;
}

// Rows [i0, i0 + m) of a tensor description (1-d or 2-d).
TensorDesc Rows(const TensorDesc& d, int64_t i0, int64_t m) {
  TensorDesc s = d;
  s.shape[0] = m;
  s.data = d.data + i0 * d.strides[0] * DtypeSize(d.dtype);
  return s;
}

class LcePlan final : public Plan {
 public:
  explicit LcePlan(const Checked& k) : k_(k) {}

  Status Init() {
    const int64_t n = k_.n, v = k_.c, h = k_.h, nc = k_.chunk;
    dtype_ = k_.input.dtype;
    if (k_.softcap > 0.0f) softcap_ = GetSoftcapKernels();
    // BF16 operands where oneDNN has no BF16 product (no AVX512_BF16/AVX512_CORE, AArch64
    // without BF16), or when tests force it: f32 products on operands converted a block at a
    // time (docs/large_vocab.md).
    if (h > 0 && n > 0) ACLNN_RETURN_IF_ERROR(CreateProducts());
    rows_ = booker_.Book<ce::RowTarget>(static_cast<uint64_t>(n));
    if (k_.has_weight) weights_ = booker_.Book<float>(static_cast<uint64_t>(v));
    loss_rows_ = booker_.Book<double>(static_cast<uint64_t>(n));
    zl_rows_ = booker_.Book<double>(static_cast<uint64_t>(n));
    lse_rows_ = booker_.Book<double>(static_cast<uint64_t>(n));
    logits_ = booker_.Book<float>(static_cast<uint64_t>(nc * v));
    if (k_.softcap > 0.0f && k_.grads())
      cap_deriv_ = booker_.Book<float>(static_cast<uint64_t>(nc * v));
    if (k_.grads() && dtype_ == ACL_BF16 && !f32_products_) {
      g16_ = booker_.Book<uint16_t>(static_cast<uint64_t>(nc * v));
    }
    if (k_.want_weight &&
        (k_.grad_weight.dtype != ACL_FLOAT || (f32_products_ && k_.grad_weight.strides[1] != 1))) {
      dw_acc_ = booker_.Book<float>(static_cast<uint64_t>(v * h));
    }
    if (k_.want_bias) db_acc_ = booker_.Book<float>(static_cast<uint64_t>(v));
    one_ = booker_.Book<float>(1);
    if (f32_products_) {
      xf_ = booker_.Book<float>(static_cast<uint64_t>(nc * h));
      wf_ = booker_.Book<float>(static_cast<uint64_t>(std::min(v, kVocabBlock) * h));
      if (k_.want_input) gxf_ = booker_.Book<float>(static_cast<uint64_t>(nc * h));
      if (k_.has_bias) bf_ = booker_.Book<float>(static_cast<uint64_t>(v));
    }
    // The cross-entropy plans' workspace, for a whole chunk and for the last, shorter one.
    uint64_t sub = 0;
    for (int64_t m : {std::min(nc, n), n % nc}) {
      if (m == 0) continue;
      ce_fwd::Checked f = FwdChunk(0, m, nullptr, nullptr, nullptr);
      sub = std::max(sub, ce_fwd::PlanWorkspaceBytes(f));
      if (k_.grads())
        sub = std::max(sub, ce_grad::PlanWorkspaceBytes(GradChunk(0, m, nullptr, nullptr, {})));
    }
    sub_ = booker_.Book<unsigned char>(sub);
    uint64_t scratch = 0;
    for (const Matmul* mm :
         {&logits_mm_[0], &logits_mm_[1], &dx_mm_[0], &dx_mm_[1], &dw_mm_[0], &dw_mm_[1]}) {
      scratch = std::max(scratch, mm->scratchpad_bytes());
    }
    scratch_ = booker_.Book<unsigned char>(scratch);
    return OkStatus();
  }

  // The products of a whole chunk ([0]) and of the last, shorter one ([1]), or the decision to
  // use f32 products on converted BF16 operands.
  Status CreateProducts() {
    const int64_t n = k_.n, v = k_.c, h = k_.h, nc = k_.chunk;
    const bool bf16 = dtype_ == ACL_BF16;
    // FLOAT16 always (oneDNN 2.6 has no f16 product on most CPUs): f32 products on converted
    // blocks, as BF16 without a BF16 product.
    static const Bf16Products choice = Bf16ProductsFromEnvironment();
    if ((bf16 && (ForceF32Products() || choice == Bf16Products::kF32)) || dtype_ == ACL_FLOAT16) {
      f32_products_ = true;
      return OkStatus();
    }
    const TensorDesc& w = k_.linear_weight;
    for (int which = 0; which < 2; ++which) {
      const int64_t m = which == 0 ? std::min(nc, n) : n % nc;
      if (m == 0) continue;
      const MatrixLayout x{dtype_, m, h, k_.input.strides[0], k_.input.strides[1]};
      const MatrixLayout wt{dtype_, h, v, w.strides[1], w.strides[0]};
      const MatrixLayout logits{ACL_FLOAT, m, v, v, 1};
      const Status st = logits_mm_[which].Init(
          kOp, x, wt, logits, false, k_.has_bias ? k_.linear_bias.dtype : ACL_DT_UNDEFINED,
          k_.has_bias ? k_.linear_bias.strides[0] : 1);
      if (!st.ok() && bf16 && st.code == ACLNN_ERR_INNER_FIND_KERNEL_ERROR) {
        logits_mm_[0] = logits_mm_[1] = Matmul();
        f32_products_ = true;
        return OkStatus();
      }
      ACLNN_RETURN_IF_ERROR(st);
      const MatrixLayout g{dtype_, m, v, v, 1};
      if (k_.want_input) {
        const TensorDesc& gi = k_.grad_input;
        ACLNN_RETURN_IF_ERROR(dx_mm_[which].Init(kOp, g, {dtype_, v, h, w.strides[0], w.strides[1]},
                                                 {gi.dtype, m, h, gi.strides[0], gi.strides[1]},
                                                 false));
      }
      if (k_.want_weight) {
        const MatrixLayout gt{dtype_, v, m, 1, v};
        const bool acc = k_.grad_weight.dtype != ACL_FLOAT;
        const MatrixLayout dw = acc ? MatrixLayout{ACL_FLOAT, v, h, h, 1}
                                    : MatrixLayout{ACL_FLOAT, v, h, k_.grad_weight.strides[0],
                                                   k_.grad_weight.strides[1]};
        ACLNN_RETURN_IF_ERROR(dw_mm_[which].Init(kOp, gt, x, dw, true));
      }
    }
    return OkStatus();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override { return UINT64_MAX; }  // never inline

  std::string Describe() const override {
    return StrFormat(
        "N %lld, H %lld, V %lld, %s, reduction %s, weight %s, bias %s, ls %g, z-loss %g, chunk "
        "%lld rows, softcap %g, gradients%s%s%s, matmul %s",
        static_cast<long long>(k_.n), static_cast<long long>(k_.h), static_cast<long long>(k_.c),
        DtypeName(dtype_), ce::ReductionName(k_.reduction), k_.has_weight ? "yes" : "no",
        k_.has_bias ? "yes" : "no", k_.label_smoothing, k_.zloss_scale,
        static_cast<long long>(k_.chunk), k_.softcap, k_.want_input ? " input" : "",
        k_.want_weight ? " weight" : "", k_.want_bias ? " bias" : "",
        f32_products_ ? "f32 sgemm on converted 16-bit blocks" : logits_mm_[0].impl());
  }

  Status Run(void* ws) const override {
    const int64_t n = k_.n, v = k_.c, h = k_.h;
    auto* rows = Grant<ce::RowTarget>(ws, rows_);
    float* w = Grant<float>(ws, weights_);
    // Every target is checked before anything is written.
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(
        ce::ScanTargets(kOp, k_.soc, k_.target, k_.has_weight ? &k_.weight : nullptr, n, v,
                        k_.ignore_index, k_.reduction, ACL_FLOAT, w, rows, &scan));
    double* loss_rows = Grant<double>(ws, loss_rows_);
    double* zl_rows = Grant<double>(ws, zl_rows_);
    double* lse_rows = Grant<double>(ws, lse_rows_);
    float* logits = Grant<float>(ws, logits_);
    uint16_t* g16 = Grant<uint16_t>(ws, g16_);
    float* dw_acc = Grant<float>(ws, dw_acc_);
    float* db = Grant<float>(ws, db_acc_);
    float* one = Grant<float>(ws, one_);
    float* cap_deriv = Grant<float>(ws, cap_deriv_);
    *one = 1.0f;
    void* sub = Grant<unsigned char>(ws, sub_);
    void* scratch = Grant<unsigned char>(ws, scratch_);
    float* dw = dw_acc != nullptr ? dw_acc : reinterpret_cast<float*>(k_.grad_weight.data);
    if (k_.want_weight) ZeroWeightGrad(dw, dw_acc != nullptr);
    if (db != nullptr) std::fill(db, db + v, 0.0f);
    const int64_t esz = DtypeSize(dtype_);
    for (int64_t i0 = 0; i0 < n; i0 += k_.chunk) {
      const int64_t m = std::min(k_.chunk, n - i0);
      const int which = m == k_.chunk ? 0 : 1;
      const char* x = k_.input.data + i0 * k_.input.strides[0] * esz;
      if (h == 0) {
        BiasOnly(logits, m);
      } else if (f32_products_) {
        ACLNN_RETURN_IF_ERROR(F32Logits(ws, x, m, logits));
      } else {
        ACLNN_RETURN_IF_ERROR(
            logits_mm_[which].Run(x, k_.linear_weight.data, logits, k_.linear_bias.data, scratch));
      }
      if (k_.softcap > 0.0f) Softcap(logits, cap_deriv, m);
      ACLNN_RETURN_IF_ERROR(
          ce_fwd::RunPlanOnce(FwdChunk(i0, m, logits, lse_rows, loss_rows, zl_rows), sub));
      if (!k_.grads()) continue;
      ACLNN_RETURN_IF_ERROR(
          ce_grad::RunPlanOnce(GradChunk(i0, m, logits, lse_rows, scan, one), sub));
      if (k_.softcap > 0.0f) SoftcapGradient(logits, cap_deriv, m);
      if (db != nullptr) AddColumnSums(logits, m, db);
      if (h == 0) continue;
      if (f32_products_) {
        ACLNN_RETURN_IF_ERROR(F32Gradients(ws, i0, m, logits, dw));
        continue;
      }
      const void* g = logits;
      if (g16 != nullptr) {
        ParallelFor(m, NumThreads(), 1, [&](int, int64_t b, int64_t e) {
          ScatterF32(ACL_BF16, ACL_BF16, logits + b * v, reinterpret_cast<char*>(g16 + b * v), 1,
                     (e - b) * v);
        });
        g = g16;
      }
      if (k_.want_input) {
        char* gi = k_.grad_input.data + i0 * k_.grad_input.strides[0] * esz;
        ACLNN_RETURN_IF_ERROR(dx_mm_[which].Run(g, k_.linear_weight.data, gi, nullptr, scratch));
      }
      if (k_.want_weight) ACLNN_RETURN_IF_ERROR(dw_mm_[which].Run(g, x, dw, nullptr, scratch));
    }
    WriteLoss(loss_rows, zl_rows, scan);
    for (int64_t i = 0; i < n; ++i) {
      StoreFromDouble(k_.lse.dtype, k_.lse.data, i * k_.lse.strides[0], lse_rows[i]);
    }
    if (dw_acc != nullptr) {
      const TensorDesc& gw = k_.grad_weight;
      const int64_t gsz = DtypeSize(gw.dtype);
      ParallelFor(v, NumThreads(), 64, [&](int, int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) {
          ScatterF32(gw.dtype, gw.dtype, dw_acc + j * h, gw.data + j * gw.strides[0] * gsz,
                     gw.strides[1], h);
        }
      });
    }
    if (db != nullptr) {
      ScatterF32(k_.grad_bias.dtype, k_.grad_bias.dtype, db, k_.grad_bias.data,
                 k_.grad_bias.strides[0], v);
    }
    return OkStatus();
  }

 private:
  // The lean forward of rows [i0, i0 + m) on their fp32 logits: per-row losses (reduction
  // "none"), z-loss terms and lse into the row buffers, in double (the gradient takes all of the
  // lse: an f32 one would put p off by |lse| * 2^-25, ce::SplitLse; lseOut is written from it).
  ce_fwd::Checked FwdChunk(int64_t i0, int64_t m, float* logits, double* lse_rows,
                           double* loss_rows, double* zl_rows = nullptr) const {
    ce_fwd::Checked f;
    static_cast<ce::Common&>(f) = k_;
    f.reduction = ce::Reduction::kNone;
    f.n = m;
    f.target = Rows(k_.target, i0, m);
    f.input.dtype = ACL_FLOAT;
    f.input.rank = 2;
    f.input.shape[0] = m;
    f.input.shape[1] = k_.c;
    f.input.strides[0] = k_.c;
    f.input.strides[1] = 1;
    f.input.data = reinterpret_cast<char*>(logits);
    f.loss = Vector(ACL_DOUBLE, m, loss_rows != nullptr ? loss_rows + i0 : nullptr);
    f.zloss = Vector(ACL_DOUBLE, m, zl_rows != nullptr ? zl_rows + i0 : nullptr);
    f.lse = Vector(ACL_DOUBLE, m, lse_rows != nullptr ? lse_rows + i0 : nullptr);
    f.return_zloss = true;
    f.op = kOp;
    f.lean = true;
    return f;
  }

  // The gradient of rows [i0, i0 + m) from their logits, in place, with the whole batch's
  // divisors for "mean".
  ce_grad::Checked GradChunk(int64_t i0, int64_t m, float* logits, double* lse_rows,
                             const ce::TargetScan& scan, float* one = nullptr) const {
    ce_grad::Checked g;
    static_cast<ce::Common&>(g) = k_;
    g.n = m;
    g.target = Rows(k_.target, i0, m);
    const ce_fwd::Checked f = FwdChunk(i0, m, logits, lse_rows, nullptr);
    g.log_prob = f.input;
    g.out = f.input;
    g.lse = f.lse;
    if (k_.has_grad_loss) {
      g.grad_loss = k_.reduction == ce::Reduction::kNone ? Rows(k_.grad_loss, i0, m) : k_.grad_loss;
    } else {
      g.grad_loss = Vector(ACL_FLOAT, 1, one, 0);  // all ones
    }
    g.from_logits = true;
    g.op = kOp;
    g.has_batch_divisors = true;
    g.batch_d = scan.d;
    g.batch_m = scan.m;
    return g;
  }

  // f32 copies of rows [r0, r0 + m) of a BF16 matrix into dst (m x cols, contiguous).
  static void RowsToF32(const TensorDesc& d, int64_t r0, int64_t m, int64_t cols, float* dst) {
    const int64_t esz = DtypeSize(d.dtype);
    ParallelFor(m, NumThreads(), 16, [&](int, int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        GatherF32(d.dtype, d.dtype, d.data + (r0 + r) * d.strides[0] * esz, d.strides[1], cols,
                  dst + r * cols);
      }
    });
  }

  // The logits of rows x (m of them) with f32 products, the weight a vocabulary block at a time.
  Status F32Logits(void* ws, const char* x, int64_t m, float* logits) const {
    const int64_t v = k_.c, h = k_.h;
    float* xf = Grant<float>(ws, xf_);
    float* wf = Grant<float>(ws, wf_);
    TensorDesc xd = k_.input;
    xd.data = const_cast<char*>(x);
    RowsToF32(xd, 0, m, h, xf);
    for (int64_t v0 = 0; v0 < v; v0 += kVocabBlock) {
      const int64_t vl = std::min(kVocabBlock, v - v0);
      RowsToF32(k_.linear_weight, v0, vl, h, wf);
      ACLNN_RETURN_IF_ERROR(Sgemm(false, true, m, vl, h, xf, h, wf, h, 0.0f, logits + v0, v));
    }
    if (k_.has_bias) {
      float* bf = Grant<float>(ws, bf_);
      GatherF32(k_.linear_bias.dtype, k_.linear_bias.dtype, k_.linear_bias.data,
                k_.linear_bias.strides[0], v, bf);
      ParallelFor(m, NumThreads(), 1, [&](int, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          for (int64_t j = 0; j < v; ++j) logits[i * v + j] += bf[j];
        }
      });
    }
    return OkStatus();
  }

  // The input's and the weight's gradients of rows [i0, i0 + m) from their f32 dlogits g, with
  // f32 products (xf still holds the rows' input from F32Logits).
  Status F32Gradients(void* ws, int64_t i0, int64_t m, const float* g, float* dw) const {
    const int64_t v = k_.c, h = k_.h;
    const float* xf = Grant<float>(ws, xf_);
    float* wf = Grant<float>(ws, wf_);
    float* gx = Grant<float>(ws, gxf_);
    const int64_t ldw = dw_acc_.bytes != 0 ? h : k_.grad_weight.strides[0];
    for (int64_t v0 = 0; v0 < v; v0 += kVocabBlock) {
      const int64_t vl = std::min(kVocabBlock, v - v0);
      RowsToF32(k_.linear_weight, v0, vl, h, wf);
      if (k_.want_input) {
        ACLNN_RETURN_IF_ERROR(
            Sgemm(false, false, m, h, vl, g + v0, v, wf, h, v0 == 0 ? 0.0f : 1.0f, gx, h));
      }
      if (k_.want_weight) {
        ACLNN_RETURN_IF_ERROR(
            Sgemm(true, false, vl, h, m, g + v0, v, xf, h, 1.0f, dw + v0 * ldw, ldw));
      }
    }
    if (k_.want_input) {
      const TensorDesc& gi = k_.grad_input;
      const int64_t esz = DtypeSize(gi.dtype);
      for (int64_t r = 0; r < m; ++r) {
        ScatterF32(gi.dtype, gi.dtype, gx + r * h, gi.data + (i0 + r) * gi.strides[0] * esz,
                   gi.strides[1], h);
      }
    }
    return OkStatus();
  }

  void ZeroWeightGrad(float* dw, bool contiguous) const {
    const int64_t v = k_.c, h = k_.h;
    const TensorDesc& gw = k_.grad_weight;
    ParallelFor(v, NumThreads(), 64, [&](int, int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        if (contiguous || gw.strides[1] == 1) {
          float* row = dw + j * (contiguous ? h : gw.strides[0]);
          std::fill(row, row + h, 0.0f);
        } else {
          for (int64_t i = 0; i < h; ++i) dw[j * gw.strides[0] + i * gw.strides[1]] = 0.0f;
        }
      }
    });
  }

  // H == 0: every logit is the bias (or 0).
  void BiasOnly(float* logits, int64_t m) const {
    for (int64_t j = 0; j < k_.c; ++j) {
      const float b =
          k_.has_bias ? static_cast<float>(LoadAsDouble(k_.linear_bias.dtype, k_.linear_bias.data,
                                                        j * k_.linear_bias.strides[0]))
                      : 0.0f;
      for (int64_t i = 0; i < m; ++i) logits[i * k_.c + j] = b;
    }
  }

  // The chunk's logits capped in place (softcap * tanh(z / softcap)) and, with gradients, the
  // factor 1 - tanh^2 of the derivative.
  void Softcap(float* logits, float* deriv, int64_t m) const {
    const int64_t v = k_.c;
    ParallelFor(m, NumThreads(), 1, [&](int, int64_t b, int64_t e) {
      softcap_.cap(logits + b * v, deriv != nullptr ? deriv + b * v : nullptr,
                   static_cast<size_t>((e - b) * v), k_.softcap);
    });
  }

  // The gradient of the capped logits turned into that of the logits (times the factor).
  void SoftcapGradient(float* g, const float* deriv, int64_t m) const {
    const int64_t v = k_.c;
    ParallelFor(m, NumThreads(), 1, [&](int, int64_t b, int64_t e) {
      softcap_.scale(g + b * v, deriv + b * v, static_cast<size_t>((e - b) * v));
    });
  }

  // db[j] += sum over the chunk's rows of g[i][j], rows in order (the same bits for any
  // thread count: columns are split, not rows).
  void AddColumnSums(const float* g, int64_t m, float* db) const {
    const int64_t v = k_.c;
    ParallelFor(v, NumThreads(), 4096, [&](int, int64_t b, int64_t e) {
      for (int64_t i = 0; i < m; ++i) {
        const float* row = g + i * v;
        for (int64_t j = b; j < e; ++j) db[j] += row[j];
      }
    });
  }

  void WriteLoss(const double* loss_rows, const double* zl_rows, const ce::TargetScan& scan) const {
    const TensorDesc& l = k_.loss;
    if (k_.reduction == ce::Reduction::kNone) {
      for (int64_t i = 0; i < k_.n; ++i)
        StoreFromDouble(l.dtype, l.data, i * l.strides[0], loss_rows[i]);
      return;
    }
    double total = 0.0, zl = 0.0;
    for (int64_t i = 0; i < k_.n; ++i) {
      total += loss_rows[i];
      zl += zl_rows[i];
    }
    const double loss =
        k_.reduction == ce::Reduction::kSum ? total : (total - zl) / scan.d + zl / scan.m;
    StoreFromDouble(l.dtype, l.data, 0, loss);
  }

  // Weight rows converted to f32 at a time on the f32-products path (2 MiB per 128 of H).
  static constexpr int64_t kVocabBlock = 4096;

  const Checked k_;
  aclDataType dtype_ = ACL_FLOAT;
  bool f32_products_ = false;
  Matmul logits_mm_[2], dx_mm_[2], dw_mm_[2];
  WorkspaceBooker booker_;
  WorkspaceBooking rows_, weights_, loss_rows_, zl_rows_, lse_rows_, logits_, g16_, dw_acc_,
      db_acc_, one_, sub_, scratch_, xf_, wf_, gxf_, bf_, cap_deriv_;
  SoftcapKernels softcap_;  // chosen at phase 1, with the plan's other kernels
};

}  // namespace

Status MakePlan(const Checked& c, std::unique_ptr<Plan>* plan) {
  auto p = std::make_unique<LcePlan>(c);
  ACLNN_RETURN_IF_ERROR(p->Init());
  *plan = std::move(p);
  return OkStatus();
}

}  // namespace lce
}  // namespace aclnn_cpu
