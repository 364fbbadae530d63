// K-dimensional cross-entropy (aclnn-cpu's extension, docs/usage.md): the lean forward, the
// gradient from logits and both in one call, of (N, C, d1, ..., dK) inputs, read in place by
// column tiles. The operator table checks them on 3 x 5 x 7 in every layout, dtype and option
// set on every target, and their determinism; here: shapes of several tiles and a partial one,
// K = 3, size-1 dims, the in-place gradient, the one call's bits, and the rules (rank refused
// elsewhere, position shapes, a bad target named by its position, nothing written).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "call.h"
#include "device_tensor.h"
#include "run_op.h"

using optable::Call;
using optable::Problem;
using testing_support::DeviceTensor;
using testing_support::OpResult;
using testing_support::RunOp;

namespace {

void CheckProblem(const Problem& p) {
  SCOPED_TRACE(p.ToString());
  Call c(p);
  c.FillRandom();
  const optable::RunResult r = c.Run();
  ASSERT_EQ(r.status, 0) << r.message;
  for (const optable::Verdict& v : c.Check())
    EXPECT_TRUE(v.failure.empty()) << v.output << ": " << v.failure;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.tensor(i) != nullptr) {
      EXPECT_TRUE(c.tensor(i)->CanariesOutsideViewIntact());
    }
  }
}

}  // namespace

// 40 classes of f32 make tiles of 400 positions: 3000 = 7 whole tiles and a partial one.
TEST(KDimCrossEntropy, ManyTilesSizeOneDimsAndThreeSpatialDims) {
  for (const char* name : {"ce_lse", "ce_grad_logits", "ce_with_grad"}) {
    const optable::OpSpec* op = optable::FindOp(name);
    ASSERT_NE(op, nullptr);
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
             {2, 40, 3000}, {2, 5, 4, 3, 17}, {4, 21, 1, 33}, {1, 3, 1}}) {
      for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_DOUBLE}) {
        for (const char* reduction : {"none", "mean"}) {
          Problem p = op->all_options(optable::DefaultProblem(op));
          p.shape = shape;
          p.dtype = dt;
          p.reduction = reduction;
          CheckProblem(p);
        }
      }
    }
  }
}

// The gradient over the logits' own memory gives the bits of the gradient out of place.
TEST(KDimCrossEntropy, GradientInPlaceEqualsOutOfPlace) {
  const int64_t n = 2, c = 9, h = 5, w = 70;
  std::mt19937_64 rng(3);
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
    DeviceTensor x(dt, {n, c, h, w}), x2(dt, {n, c, h, w}), out(dt, {n, c, h, w});
    DeviceTensor g(dt, {}), lse(ACL_FLOAT, {n, h, w}), target(ACL_INT64, {n, h, w});
    const std::vector<double> xv = x.Rounded(testing_support::Normal(rng, n * c * h * w, 0, 2));
    x.Set(xv);
    x2.Set(xv);
    g.Set({0.75});
    lse.Set(testing_support::Uniform(rng, n * h * w, 2.0, 4.0));
    std::vector<double> t(static_cast<size_t>(n * h * w));
    for (size_t i = 0; i < t.size(); ++i) t[i] = i % 6 == 1 ? -100.0 : static_cast<double>(i % c);
    target.Set(t);
    char mean[] = "mean";
    auto run = [&](DeviceTensor& logits, DeviceTensor& o) {
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
                g.get(), logits.get(), target.get(), nullptr, nullptr, lse.get(), mean, -100, 0.1,
                0.0, o.get(), ws, ex);
          },
          aclnnCpuCrossEntropyLossGradFromLogits);
    };
    const OpResult separate = run(x, out);
    ASSERT_EQ(separate.status, 0) << separate.message;
    EXPECT_EQ(x.Get(), xv);
    const OpResult in_place = run(x2, x2);
    ASSERT_EQ(in_place.status, 0) << in_place.message;
    EXPECT_EQ(x2.Get(), out.Get());
  }
}

namespace {

struct LseCall {
  DeviceTensor x{ACL_FLOAT, {2, 3, 4, 5}}, target{ACL_INT64, {2, 4, 5}}, loss{ACL_FLOAT, {}},
      zloss{ACL_FLOAT, {}}, lse{ACL_FLOAT, {2, 4, 5}};
  LseCall() {
    x.Set(std::vector<double>(static_cast<size_t>(x.numel()), 0.5));
    target.Set(std::vector<double>(static_cast<size_t>(target.numel()), 1.0));
  }
  OpResult Run(const aclTensor* tgt, const aclTensor* lse_out) {
    char mean[] = "mean";
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(x.get(), tgt, nullptr, mean, -100, 0.0,
                                                             0.0, false, loss.get(), zloss.get(),
                                                             lse_out, ws, ex);
        },
        aclnnCpuCrossEntropyLossLse);
  }
  bool OutputsUntouched() const { return loss.Untouched() && zloss.Untouched() && lse.Untouched(); }
};

}  // namespace

TEST(KDimCrossEntropy, PositionShapesAreChecked) {
  LseCall c;
  DeviceTensor flat_target(ACL_INT64, {2});
  OpResult r = c.Run(flat_target.get(), c.lse.get());
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_EQ(r.message,
            "aclnnCpuCrossEntropyLossLse: target has shape [2] but must be (N, d1, ..., dK) = "
            "[2, 4, 5].");
  DeviceTensor flat_lse(ACL_FLOAT, {2});
  r = c.Run(c.target.get(), flat_lse.get());
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_EQ(r.message,
            "aclnnCpuCrossEntropyLossLse: lseOut has shape [2] but must be (N, d1, ..., dK) = "
            "[2, 4, 5].");
  EXPECT_TRUE(c.OutputsUntouched());
  r = c.Run(c.target.get(), c.lse.get());
  EXPECT_EQ(r.status, 0) << r.message;
}

// A bad class index is named by its position in (N, d1, ..., dK) order; nothing is written.
TEST(KDimCrossEntropy, ABadTargetIsNamedAndNothingIsWritten) {
  LseCall c;
  std::vector<double> t(40, 1.0);
  t[27] = 3.0;  // position (1, 1, 2): 3 is not a class of 3
  c.target.Set(t);
  const OpResult r = c.Run(c.target.get(), c.lse.get());
  EXPECT_EQ(r.status, ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(r.message,
            "aclnnCpuCrossEntropyLossLse: target[27] = 3 is neither ignoreIndex (-100) nor a "
            "class in [0, 3); nothing was written.");
  EXPECT_TRUE(c.OutputsUntouched());
}

// CANN's operator stays 2-d, as do the extensions that write N x C tensors.
TEST(KDimCrossEntropy, CannsOperatorRefusesKDimensionalInputs) {
  DeviceTensor x(ACL_FLOAT, {2, 3, 4}), target(ACL_INT64, {2, 4}), loss(ACL_FLOAT, {}),
      lp(ACL_FLOAT, {2, 3, 4}), zloss(ACL_FLOAT, {}), lse(ACL_FLOAT, {2, 4});
  char mean[] = "mean";
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGetWorkspaceSize(x.get(), target.get(), nullptr, mean, -100,
                                                     0.0, 0.0, false, loss.get(), lp.get(),
                                                     zloss.get(), lse.get(), ws, ex);
      },
      aclnnCrossEntropyLoss);
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_EQ(r.message, "aclnnCrossEntropyLoss: input has shape [2, 3, 4] but must be 2-d (N, C).");
  EXPECT_TRUE(loss.Untouched() && lp.Untouched() && zloss.Untouched() && lse.Untouched());
}

// The class index travels as a value of the compute type in the column tiles.
TEST(KDimCrossEntropy, ClassesBelowTwoToThe24) {
  DeviceTensor x(ACL_FLOAT, {1, int64_t{1} << 24, 1}), target(ACL_INT64, {1, 1}),
      loss(ACL_FLOAT, {}), zloss(ACL_FLOAT, {}), lse(ACL_FLOAT, {1, 1});
  char mean[] = "mean";
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(x.get(), target.get(), nullptr, mean,
                                                           -100, 0.0, 0.0, false, loss.get(),
                                                           zloss.get(), lse.get(), ws, ex);
      },
      aclnnCpuCrossEntropyLossLse);
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_EQ(r.message,
            "aclnnCpuCrossEntropyLossLse: input has 16777216 classes; K-dimensional inputs take "
            "fewer than 2^24.");
  EXPECT_TRUE(loss.Untouched() && zloss.Untouched() && lse.Untouched());
}

// The forward with the gradient (aclnnCpuCrossEntropyLossWithGrad) of a K-dimensional input
// gives the bits of the lean forward followed by the gradient from the logits on its lse: one
// pass over the tiles (both operands' positions contiguous), or the two operators in turn (a
// gradOut whose positions are not), out of place and in place, with a given loss gradient and
// without one (1). The torch path switches between them on that claim.
TEST(KDimCrossEntropy, WithGradIsLseThenGradFromLogits) {
  using testing_support::Layout;
  const std::vector<int64_t> shape = {2, 40, 3, 700}, pos = {2, 3, 700};  // 2 tiles a row
  const int64_t numel = 2 * 40 * 3 * 700, npos = 2 * 3 * 700;
  const std::pair<Layout, Layout> layouts[] = {{Layout::kContiguous, Layout::kContiguous},
                                               {Layout::kContiguous, Layout::kTransposed},
                                               {Layout::kTransposed, Layout::kTransposed}};
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_DOUBLE}) {
    const aclDataType st = dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    for (const auto& [lx, lg] : layouts) {
      for (const char* red : {"mean", "none", "sum"}) {
        for (bool given : {true, false}) {
          SCOPED_TRACE(std::string(red) + " dtype " + std::to_string(dt) + " layouts " +
                       testing_support::LayoutName(lx) + "/" + testing_support::LayoutName(lg) +
                       (given ? " gradLoss" : " no gradLoss"));
          std::mt19937_64 rng(17);
          const bool none = std::string(red) == "none";
          const std::vector<int64_t> ls = none ? pos : std::vector<int64_t>{};
          DeviceTensor x(dt, shape, lx), x2(dt, shape, lx), grad(dt, shape, lg),
              ref_grad(dt, shape, lg);
          DeviceTensor g(dt, ls), target(ACL_INT64, pos), w(ACL_FLOAT, {40});
          DeviceTensor loss1(st, ls), z1(st, ls), lse1(st, pos), loss2(st, ls), z2(st, ls),
              lse2(st, pos), loss3(st, ls), z3(st, ls), lse3(st, pos);
          const std::vector<double> xv = x.Rounded(testing_support::Normal(rng, numel, 0.0, 2.0));
          x.Set(xv);
          x2.Set(xv);
          g.Set(given ? testing_support::Uniform(rng, g.numel(), 0.5, 1.5)
                      : std::vector<double>(static_cast<size_t>(g.numel()), 1.0));
          std::vector<double> t(static_cast<size_t>(npos));
          for (size_t i = 0; i < t.size(); ++i)
            t[i] = i % 7 == 3 ? -100.0 : static_cast<double>((i * 13) % 40);
          target.Set(t);
          w.Set(testing_support::Uniform(rng, 40, 0.5, 2.0));
          char* r = const_cast<char*>(red);
          OpResult s = RunOp(
              [&](uint64_t* ws, aclOpExecutor** ex) {
                return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
                    x.get(), target.get(), w.get(), r, -100, 0.1, 1e-3, true, loss1.get(), z1.get(),
                    lse1.get(), ws, ex);
              },
              aclnnCpuCrossEntropyLossLse);
          ASSERT_EQ(s.status, 0) << s.message;
          s = RunOp(
              [&](uint64_t* ws, aclOpExecutor** ex) {
                return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
                    g.get(), x.get(), target.get(), w.get(), nullptr, lse1.get(), r, -100, 0.1,
                    1e-3, ref_grad.get(), ws, ex);
              },
              aclnnCpuCrossEntropyLossGradFromLogits);
          ASSERT_EQ(s.status, 0) << s.message;
          auto with_grad = [&](DeviceTensor& in, DeviceTensor& out, DeviceTensor& loss,
                               DeviceTensor& z, DeviceTensor& lse) {
            return RunOp(
                [&](uint64_t* ws, aclOpExecutor** ex) {
                  return aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
                      in.get(), target.get(), w.get(), given ? g.get() : nullptr, r, -100, 0.1,
                      1e-3, true, loss.get(), z.get(), lse.get(), out.get(), ws, ex);
                },
                aclnnCpuCrossEntropyLossWithGrad);
          };
          s = with_grad(x, grad, loss2, z2, lse2);
          ASSERT_EQ(s.status, 0) << s.message;
          EXPECT_EQ(x.Get(), xv);
          const std::vector<double> want = ref_grad.Get();
          EXPECT_EQ(grad.Get(), want);
          EXPECT_TRUE(grad.CanariesOutsideViewIntact());
          if (lx == lg) {  // in place: gradOut must be the input's own view
            s = with_grad(x2, x2, loss3, z3, lse3);
            ASSERT_EQ(s.status, 0) << s.message;
            EXPECT_EQ(x2.Get(), want);
            EXPECT_TRUE(x2.CanariesOutsideViewIntact());
            EXPECT_EQ(loss3.Get(), loss1.Get());
            EXPECT_EQ(lse3.Get(), lse1.Get());
          }
          EXPECT_EQ(loss2.Get(), loss1.Get());
          EXPECT_EQ(lse2.Get(), lse1.Get());
          EXPECT_EQ(z2.Get(), z1.Get());
        }
      }
    }
  }
}

TEST(KDimCrossEntropy, WithGradShapesAreChecked) {
  DeviceTensor x(ACL_FLOAT, {2, 3, 4, 5}), target(ACL_INT64, {2, 4, 5}), loss(ACL_FLOAT, {}),
      z(ACL_FLOAT, {}), lse(ACL_FLOAT, {2, 4, 5}), out(ACL_FLOAT, {2, 3, 4, 5}),
      out_flat(ACL_FLOAT, {2, 3}), g_flat(ACL_FLOAT, {2}), loss_none(ACL_FLOAT, {2, 4, 5});
  x.Set(std::vector<double>(120, 0.5));
  target.Set(std::vector<double>(40, 1.0));
  char mean[] = "mean", none[] = "none";
  auto call = [&](char* red, const aclTensor* g, const aclTensor* l, const aclTensor* o) {
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(x.get(), target.get(), nullptr, g,
                                                                  red, -100, 0.0, 0.0, false, l, l,
                                                                  lse.get(), o, ws, ex);
        },
        aclnnCpuCrossEntropyLossWithGrad);
  };
  OpResult r = call(mean, nullptr, loss.get(), out_flat.get());
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_EQ(r.message,
            "aclnnCpuCrossEntropyLossWithGrad: gradOut has shape [2, 3] but input has shape "
            "[2, 3, 4, 5]; they must be equal.");
  r = call(none, g_flat.get(), loss_none.get(), out.get());
  EXPECT_EQ(r.status, ACLNN_ERR_INNER_TILING_ERROR);
  EXPECT_NE(r.message.find("gradLossOptional has shape [2]"), std::string::npos) << r.message;
  EXPECT_TRUE(loss.Untouched() && lse.Untouched() && out.Untouched() && loss_none.Untouched());
  r = call(mean, nullptr, loss.get(), out.get());
  EXPECT_EQ(r.status, 0) << r.message;
}
