// The probability-target cross-entropy extensions (aclnnCpuCrossEntropyLossProb, its gradient
// and both in one pass) beyond what the operator table checks for every operator (accuracy
// against the double reference on every target, dtype, layout and option set; fuzzing;
// determinism): their validation rules, each with its code and sentence, writing nothing;
// PyTorch's divisor for "mean" (N, whatever the weights); the gradient in place; one pass giving
// the two operators' bits.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "device_tensor.h"
#include "run_op.h"

using testing_support::DeviceTensor;
using testing_support::OpResult;
using testing_support::RunOp;

namespace {

struct Tensors {
  DeviceTensor x{ACL_FLOAT, {4, 6}}, q{ACL_FLOAT, {4, 6}}, w{ACL_FLOAT, {6}}, loss{ACL_FLOAT, {}},
      lse{ACL_FLOAT, {4}}, g{ACL_FLOAT, {}}, out{ACL_FLOAT, {4, 6}};
  Tensors() {
    x.Set(std::vector<double>(24, 0.5));
    q.Set(std::vector<double>(24, 1.0 / 6.0));
    w.Set(std::vector<double>(6, 1.0));
    g.Set({1.0});
    loss.FillCanaries();
    lse.FillCanaries();
    out.FillCanaries();
  }
};

std::pair<int, std::string> Forward(const aclTensor* x, const aclTensor* q, const aclTensor* w,
                                    const char* red, double ls, const aclTensor* loss,
                                    const aclTensor* lse) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = aclnnCpuCrossEntropyLossProbGetWorkspaceSize(x, q, w, const_cast<char*>(red), ls,
                                                              loss, lse, &ws, &ex);
  if (st == 0) aclDestroyAclOpExecutor(ex);
  return {st, testing_support::TakeMessage()};
}

std::pair<int, std::string> Grad(const aclTensor* g, const aclTensor* x, const aclTensor* q,
                                 const aclTensor* lse, const char* red, const aclTensor* out) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(
      g, x, q, nullptr, lse, const_cast<char*>(red), 0.0, out, &ws, &ex);
  if (st == 0) aclDestroyAclOpExecutor(ex);
  return {st, testing_support::TakeMessage()};
}

#define EXPECT_REFUSED(r, code, words)                                  \
  do {                                                                  \
    EXPECT_EQ((r).first, code) << (r).second;                           \
    EXPECT_NE((r).second.find(words), std::string::npos) << (r).second; \
  } while (0)

}  // namespace

TEST(CrossEntropyProb, Validation) {
  Tensors t;
  EXPECT_REFUSED(Forward(nullptr, t.q.get(), nullptr, "mean", 0.0, t.loss.get(), t.lse.get()),
                 161001, "aclnnCpuCrossEntropyLossProb: input is null");
  DeviceTensor q16(ACL_FLOAT16, {4, 6}), qi(ACL_INT64, {4, 6}), q5(ACL_FLOAT, {4, 5});
  EXPECT_REFUSED(Forward(t.x.get(), q16.get(), nullptr, "mean", 0.0, t.loss.get(), t.lse.get()),
                 161002, "target has dtype FLOAT16");
  EXPECT_REFUSED(Forward(t.x.get(), qi.get(), nullptr, "mean", 0.0, t.loss.get(), t.lse.get()),
                 161002, "target has dtype INT64");
  EXPECT_REFUSED(Forward(t.x.get(), q5.get(), nullptr, "mean", 0.0, t.loss.get(), t.lse.get()),
                 561002, "target has shape [4, 5]");
  DeviceTensor w16(ACL_BF16, {6}), w5(ACL_FLOAT, {5});
  EXPECT_REFUSED(Forward(t.x.get(), t.q.get(), w16.get(), "mean", 0.0, t.loss.get(), t.lse.get()),
                 161002, "weightOptional has dtype BF16");
  EXPECT_REFUSED(Forward(t.x.get(), t.q.get(), w5.get(), "mean", 0.0, t.loss.get(), t.lse.get()),
                 561002, "weightOptional has shape [5]");
  EXPECT_REFUSED(
      Forward(t.x.get(), t.q.get(), nullptr, "batchmean", 0.0, t.loss.get(), t.lse.get()), 561002,
      "reductionOptional \"batchmean\"");
  EXPECT_REFUSED(Forward(t.x.get(), t.q.get(), nullptr, "mean", 1.5, t.loss.get(), t.lse.get()),
                 561002, "labelSmoothing 1.5 is outside");
  EXPECT_REFUSED(Forward(t.x.get(), t.q.get(), nullptr, "none", 0.0, t.loss.get(), t.lse.get()),
                 561002, "lossOut has shape []");
  DeviceTensor lse16(ACL_FLOAT16, {4}), x3(ACL_FLOAT, {4, 6, 1});
  EXPECT_REFUSED(Forward(t.x.get(), t.q.get(), nullptr, "mean", 0.0, t.loss.get(), lse16.get()),
                 161002, "lseOut has dtype FLOAT16");
  EXPECT_REFUSED(Forward(x3.get(), x3.get(), nullptr, "mean", 0.0, t.loss.get(), t.lse.get()),
                 561002, "input has shape [4, 6, 1] but must be 2-d");
  EXPECT_REFUSED(Grad(t.g.get(), t.x.get(), t.q.get(), nullptr, "mean", t.out.get()), 161001,
                 "aclnnCpuCrossEntropyLossProbGrad: lse is null");
  DeviceTensor g4(ACL_FLOAT, {4}), gb(ACL_BF16, {});
  EXPECT_REFUSED(Grad(g4.get(), t.x.get(), t.q.get(), t.lse.get(), "mean", t.out.get()), 561002,
                 "gradLoss has shape [4]");
  EXPECT_REFUSED(Grad(gb.get(), t.x.get(), t.q.get(), t.lse.get(), "mean", t.out.get()), 161002,
                 "gradLoss has dtype BF16");
  EXPECT_TRUE(t.loss.Untouched());
  EXPECT_TRUE(t.lse.Untouched());
  EXPECT_TRUE(t.out.Untouched());
}

// "mean" divides by N whatever the weights (PyTorch's rule for probabilities; for class indices
// the divisor is the sum of the targets' weights), and the gradient may overwrite the logits.
TEST(CrossEntropyProb, MeanDividesByNAndTheGradientRunsInPlace) {
  const int64_t n = 3, c = 4;
  DeviceTensor x(ACL_FLOAT, {n, c}), q(ACL_FLOAT, {n, c}), w(ACL_FLOAT, {c}), mean(ACL_FLOAT, {}),
      sum(ACL_FLOAT, {}), lse(ACL_DOUBLE, {n}), g(ACL_FLOAT, {}), out(ACL_FLOAT, {n, c});
  x.Set({0.1, 0.2, 0.3, 0.4, -1, 2, 0, 1, 3, 3, 3, 3});
  q.Set({1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25, 0, 0.5, 0.5, 0});
  w.Set({2.0, 0.5, 1.0, 3.0});
  g.Set({1.0});
  auto fwd = [&](const char* red, DeviceTensor& loss) {
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossProbGetWorkspaceSize(x.get(), q.get(), w.get(),
                                                              const_cast<char*>(red), 0.0,
                                                              loss.get(), lse.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossProb);
  };
  ASSERT_EQ(fwd("mean", mean).status, 0);
  ASSERT_EQ(fwd("sum", sum).status, 0);
  EXPECT_NEAR(mean.Get()[0], sum.Get()[0] / 3.0, 1e-6 * std::fabs(sum.Get()[0]));
  auto grad = [&](DeviceTensor& logits, DeviceTensor& o) {
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(
              g.get(), logits.get(), q.get(), w.get(), lse.get(), const_cast<char*>("mean"), 0.1,
              o.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossProbGrad);
  };
  ASSERT_EQ(grad(x, out).status, 0);
  const std::vector<double> want = out.Get();
  ASSERT_EQ(grad(x, x).status, 0);
  EXPECT_EQ(x.Get(), want);
}

// The forward with the gradient gives the bits of the forward, then the gradient on the
// forward's lseOut (gradLossOptional null: ones), out of place and over the input.
TEST(CrossEntropyProb, WithGradIsForwardThenGrad) {
  const int64_t n = 5, c = 37;
  std::vector<double> xv(n * c), qv(n * c), wv(c);
  for (int64_t k = 0; k < n * c; ++k) {
    xv[k] = 3.0 * std::sin(0.7 * static_cast<double>(k));
    qv[k] = (k % 3 == 0) ? 0.0 : 1.0 + std::cos(static_cast<double>(k));
  }
  for (int64_t j = 0; j < c; ++j) wv[j] = 0.5 + 0.05 * static_cast<double>(j);
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_DOUBLE}) {
    for (const char* red : {"mean", "sum", "none"}) {
      for (bool given : {true, false}) {
        SCOPED_TRACE(std::string(red) + (given ? " gradLoss" : " ones") + " dtype " +
                     std::to_string(dt));
        const std::vector<int64_t> ls =
            std::string(red) == "none" ? std::vector<int64_t>{n} : std::vector<int64_t>{};
        const aclDataType stats = dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
        DeviceTensor x(dt, {n, c}), q(dt, {n, c}), w(ACL_FLOAT, {c}), g(dt, ls), loss(dt, ls),
            lse(stats, {n}), out(dt, {n, c}), loss2(dt, ls), lse2(stats, {n}), grad(dt, {n, c}),
            x2(dt, {n, c});
        x.Set(xv);
        x2.Set(xv);
        q.Set(qv);
        w.Set(wv);
        g.Set(given ? std::vector<double>(ls.empty() ? 1 : n, 0.75)
                    : std::vector<double>(ls.empty() ? 1 : n, 1.0));
        ASSERT_EQ(RunOp(
                      [&](uint64_t* ws, aclOpExecutor** ex) {
                        return aclnnCpuCrossEntropyLossProbGetWorkspaceSize(
                            x.get(), q.get(), w.get(), const_cast<char*>(red), 0.1, loss.get(),
                            lse.get(), ws, ex);
                      },
                      aclnnCpuCrossEntropyLossProb)
                      .status,
                  0);
        ASSERT_EQ(RunOp(
                      [&](uint64_t* ws, aclOpExecutor** ex) {
                        return aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(
                            g.get(), x.get(), q.get(), w.get(), lse.get(), const_cast<char*>(red),
                            0.1, out.get(), ws, ex);
                      },
                      aclnnCpuCrossEntropyLossProbGrad)
                      .status,
                  0);
        auto with_grad = [&](DeviceTensor& in, DeviceTensor& o) {
          return RunOp(
              [&](uint64_t* ws, aclOpExecutor** ex) {
                return aclnnCpuCrossEntropyLossProbWithGradGetWorkspaceSize(
                    in.get(), q.get(), w.get(), given ? g.get() : nullptr, const_cast<char*>(red),
                    0.1, loss2.get(), lse2.get(), o.get(), ws, ex);
              },
              aclnnCpuCrossEntropyLossProbWithGrad);
        };
        ASSERT_EQ(with_grad(x, grad).status, 0);
        EXPECT_EQ(loss2.Get(), loss.Get());
        EXPECT_EQ(lse2.Get(), lse.Get());
        EXPECT_EQ(grad.Get(), out.Get());
        ASSERT_EQ(with_grad(x2, x2).status, 0);
        EXPECT_EQ(x2.Get(), out.Get());
        EXPECT_EQ(loss2.Get(), loss.Get());
      }
    }
  }
}

// Its own rules (each with its code and sentence, nothing written): gradOut required, of the
// input's shape and dtype; gradLossOptional shaped like lossOut, the input's dtype or FLOAT.
TEST(CrossEntropyProb, WithGradValidation) {
  Tensors t;
  auto call = [&](const aclTensor* g, const aclTensor* out, const char* red) {
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    const int st = aclnnCpuCrossEntropyLossProbWithGradGetWorkspaceSize(
        t.x.get(), t.q.get(), nullptr, g, const_cast<char*>(red), 0.0, t.loss.get(), t.lse.get(),
        out, &ws, &ex);
    if (st == 0) aclDestroyAclOpExecutor(ex);
    return std::pair<int, std::string>{st, testing_support::TakeMessage()};
  };
  EXPECT_REFUSED(call(nullptr, nullptr, "mean"), 161001,
                 "aclnnCpuCrossEntropyLossProbWithGrad: gradOut is null");
  DeviceTensor o5(ACL_FLOAT, {4, 5}), o16(ACL_FLOAT16, {4, 6}), g4(ACL_FLOAT, {4}),
      gi(ACL_INT32, {});
  EXPECT_REFUSED(call(nullptr, o5.get(), "mean"), 561002, "gradOut has shape [4, 5]");
  EXPECT_REFUSED(call(nullptr, o16.get(), "mean"), 161002, "gradOut has dtype FLOAT16");
  EXPECT_REFUSED(call(g4.get(), t.out.get(), "mean"), 561002, "gradLossOptional has shape [4]");
  EXPECT_REFUSED(call(gi.get(), t.out.get(), "sum"), 161002, "gradLossOptional has dtype INT32");
  EXPECT_TRUE(t.loss.Untouched());
  EXPECT_TRUE(t.lse.Untouched());
  EXPECT_TRUE(t.out.Untouched());
  EXPECT_EQ(call(nullptr, t.out.get(), "mean").first, 0);
}
