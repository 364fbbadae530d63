// The lean cross-entropy extensions (include/aclnn_cpu/aclnn_cpu_ext.h) beyond what the operator
// table checks for every operator (accuracy against the double reference on every target,
// layout and option set; canaries; determinism; fuzzing): the gradient in place over the logits
// gives the same bits as out of place; the lean forward's loss and lse are the bits of
// aclnnCpuCrossEntropyLoss; the extensions' own validation rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "device_tensor.h"
#include "run_op.h"

using testing_support::DeviceTensor;
using testing_support::Layout;
using testing_support::OpResult;
using testing_support::RunOp;

namespace {

struct GradCase {
  aclDataType dtype;
  Layout layout;
  const char* reduction;
  bool weight;
  double ls, z;
};

std::vector<double> Lse(const std::vector<double>& x, int64_t n, int64_t c) {
  std::vector<double> lse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double m = -HUGE_VAL, s = 0.0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x[i * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(x[i * c + j] - m);
    lse[i] = m + std::log(s);
  }
  return lse;
}

// The gradient from logits, out of place and in place (out = the logits' tensor).
void CheckInPlace(const GradCase& k) {
  const int64_t n = 37, c = 1000;
  SCOPED_TRACE(std::string(k.reduction) + " dtype " + std::to_string(k.dtype) + " layout " +
               testing_support::LayoutName(k.layout));
  std::mt19937_64 rng(11);
  const bool none = std::string(k.reduction) == "none";
  const std::vector<int64_t> scalar = none ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  DeviceTensor x(k.dtype, {n, c}, k.layout), x2(k.dtype, {n, c}, k.layout),
      out(k.dtype, {n, c}, k.layout);
  DeviceTensor g(k.dtype, scalar), gz(k.dtype, scalar), lse(ACL_FLOAT, {n}), target(ACL_INT64, {n}),
      w(ACL_FLOAT, {c});
  const std::vector<double> xv = x.Rounded(testing_support::Normal(rng, n * c, 0.0, 2.0));
  x.Set(xv);
  x2.Set(xv);
  g.Set(testing_support::Uniform(rng, g.numel(), 0.5, 1.5));
  gz.Set(testing_support::Uniform(rng, gz.numel(), 0.5, 1.5));
  lse.Set(Lse(xv, n, c));
  std::vector<double> t(static_cast<size_t>(n));
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = i % 7 == 3 ? -100.0 : static_cast<double>((i * 131) % c);
  target.Set(t);
  w.Set(testing_support::Uniform(rng, c, 0.5, 2.0));
  auto run = [&](DeviceTensor& logits, DeviceTensor& o) {
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
              g.get(), logits.get(), target.get(), k.weight ? w.get() : nullptr,
              k.z != 0.0 ? gz.get() : nullptr, lse.get(), const_cast<char*>(k.reduction), -100,
              k.ls, k.z, o.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossGradFromLogits);
  };
  const OpResult separate = run(x, out);
  ASSERT_EQ(separate.status, 0) << separate.message;
  EXPECT_EQ(x.Get(), xv);  // the input is untouched out of place
  const OpResult in_place = run(x2, x2);
  ASSERT_EQ(in_place.status, 0) << in_place.message;
  EXPECT_EQ(x2.Get(), out.Get());
  EXPECT_TRUE(x2.CanariesOutsideViewIntact());
}

}  // namespace

TEST(LeanCrossEntropy, GradientInPlaceEqualsOutOfPlace) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    for (Layout l : {Layout::kContiguous, Layout::kTransposed}) {
      CheckInPlace({dt, l, "mean", true, 0.1, 1e-3});
      CheckInPlace({dt, l, "none", false, 0.0, 0.0});
    }
  }
  CheckInPlace({ACL_FLOAT, Layout::kPadded, "sum", true, 0.2, 0.0});
}

// The lean forward is aclnnCpuCrossEntropyLoss without logProb: the same loss, z-loss and lse
// bits.
TEST(LeanCrossEntropy, ForwardMatchesTheFullForward) {
  const int64_t n = 29, c = 5003;
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
    SCOPED_TRACE(dt);
    std::mt19937_64 rng(5);
    DeviceTensor x(dt, {n, c}), target(ACL_INT64, {n}), w(ACL_FLOAT, {c});
    x.Set(x.Rounded(testing_support::Normal(rng, n * c, 0.0, 3.0)));
    std::vector<double> t(static_cast<size_t>(n));
    for (size_t i = 0; i < t.size(); ++i)
      t[i] = i % 5 == 2 ? -100.0 : static_cast<double>(i * 97 % c);
    target.Set(t);
    w.Set(testing_support::Uniform(rng, c, 0.5, 2.0));
    DeviceTensor loss1(ACL_FLOAT, {n}), z1(ACL_FLOAT, {n}), lse1(ACL_FLOAT, {n}), lp(dt, {n, c});
    DeviceTensor loss2(ACL_FLOAT, {n}), z2(ACL_FLOAT, {n}), lse2(ACL_FLOAT, {n});
    char none[] = "none";
    const OpResult full = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossGetWorkspaceSize(x.get(), target.get(), w.get(), none,
                                                          -100, 0.1, 1e-3, true, loss1.get(),
                                                          lp.get(), z1.get(), lse1.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLoss);
    ASSERT_EQ(full.status, 0) << full.message;
    const OpResult lean = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(x.get(), target.get(), w.get(), none,
                                                             -100, 0.1, 1e-3, true, loss2.get(),
                                                             z2.get(), lse2.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossLse);
    ASSERT_EQ(lean.status, 0) << lean.message;
    EXPECT_EQ(loss1.Get(), loss2.Get());
    EXPECT_EQ(z1.Get(), z2.Get());
    EXPECT_EQ(lse1.Get(), lse2.Get());
  }
}

// Regression (issue 27): the gradient from logits of large magnitude. p = exp(x - lse) took the
// lse rounded to f32, off by up to |lse| * 2^-25, so every p was off by as much (logits of ~600:
// 2e-5, 10x PyTorch's own f32 error). A DOUBLE lse (lseOut of the lean forward and of the forward
// with the gradient, lse of the gradient) now keeps all of it; with a FLOAT one the error stays
// (the gradient is that of the lse as given), which this test also checks, so that it can fail.
TEST(LeanCrossEntropy, DoubleLseKeepsTheGradientOfLargeLogitsAccurate) {
  const int64_t n = 16, c = 300;
  std::mt19937_64 rng(3);
  DeviceTensor x(ACL_FLOAT, {n, c}), target(ACL_INT64, {n}), g(ACL_FLOAT, {});
  std::vector<double> xv = testing_support::Normal(rng, n * c, 0.0, 2.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) xv[i * c + j] += 500.0 + 10.0 * static_cast<double>(i);
  }
  xv = x.Rounded(xv);
  x.Set(xv);
  std::vector<double> t(static_cast<size_t>(n));
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>((i * 37) % c);
  target.Set(t);
  g.Set({1.0});
  char sum[] = "sum";
  const std::vector<double> lse_ref = Lse(xv, n, c);
  double max_ref = 0.0;
  std::vector<double> want(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const size_t k = static_cast<size_t>(i * c + j);
      want[k] = std::exp(xv[k] - lse_ref[i]) - (j == static_cast<int64_t>(t[i]) ? 1.0 : 0.0);
      max_ref = std::max(max_ref, std::fabs(want[k]));
    }
  }
  auto max_error = [&](const std::vector<double>& got) {
    double e = 0.0;
    for (size_t k = 0; k < got.size(); ++k) e = std::max(e, std::fabs(got[k] - want[k]));
    return e;
  };
  double err[2];
  for (aclDataType lse_dtype : {ACL_DOUBLE, ACL_FLOAT}) {
    SCOPED_TRACE(lse_dtype);
    DeviceTensor loss(ACL_FLOAT, {}), z(ACL_FLOAT, {}), lse(lse_dtype, {n}), lse2(lse_dtype, {n});
    DeviceTensor grad(ACL_FLOAT, {n, c}), grad2(ACL_FLOAT, {n, c});
    OpResult st = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(x.get(), target.get(), nullptr, sum,
                                                             -100, 0.0, 0.0, false, loss.get(),
                                                             z.get(), lse.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossLse);
    ASSERT_EQ(st.status, 0) << st.message;
    st = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
              g.get(), x.get(), target.get(), nullptr, nullptr, lse.get(), sum, -100, 0.0, 0.0,
              grad.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossGradFromLogits);
    ASSERT_EQ(st.status, 0) << st.message;
    st = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
              x.get(), target.get(), nullptr, g.get(), sum, -100, 0.0, 0.0, false, loss.get(),
              z.get(), lse2.get(), grad2.get(), ws, ex);
        },
        aclnnCpuCrossEntropyLossWithGrad);
    ASSERT_EQ(st.status, 0) << st.message;
    EXPECT_EQ(lse2.Get(), lse.Get());
    EXPECT_EQ(grad2.Get(), grad.Get());  // the forward's gradient is the one from its lse
    err[lse_dtype == ACL_DOUBLE ? 0 : 1] = max_error(grad.Get());
  }
  // f32 arithmetic over a row of c terms (the sum in exp's lse), the kernel's exp and the final
  // rounding; no term in |lse|.
  const double bound = max_ref * std::ldexp(1.0, -24) * (4.0 * static_cast<double>(c) + 8.0);
  EXPECT_LE(err[0], bound);
  EXPECT_GT(err[1], 4.0 * err[0]) << "an f32 lse should cost accuracy at |lse| ~ 650";
}

// The extensions' own rules (the shared ones are the CANN operators', tested there).
TEST(LeanCrossEntropy, Validation) {
  DeviceTensor g(ACL_FLOAT, {}), x(ACL_FLOAT, {4, 6}), target(ACL_INT64, {4}),
      out(ACL_FLOAT, {4, 6}), lse(ACL_FLOAT, {4}), lse16(ACL_BF16, {4}), loss(ACL_FLOAT, {}),
      z(ACL_FLOAT, {}), xb(ACL_BF16, {4, 6});
  x.Set(std::vector<double>(24, 0.5));
  xb.Set(std::vector<double>(24, 0.5));
  target.Set({0, 1, 2, 3});
  g.Set({1.0});
  lse.Set({2.0, 2.0, 2.0, 2.0});
  out.FillCanaries();
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  auto grad = [&](const aclTensor* logits, const aclTensor* l, const aclTensor* o) {
    const int st = aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
        g.get(), logits, target.get(), nullptr, nullptr, l, nullptr, -100, 0.0, 0.0, o, &ws, &ex);
    return std::make_pair(st, testing_support::TakeMessage());
  };
  auto r = grad(x.get(), nullptr, out.get());
  EXPECT_EQ(r.first, 161001);
  EXPECT_NE(r.second.find("aclnnCpuCrossEntropyLossGradFromLogits: lse is null"), std::string::npos)
      << r.second;
  r = grad(x.get(), lse16.get(), out.get());
  EXPECT_EQ(r.first, 161002);
  EXPECT_NE(r.second.find("lse has dtype BF16"), std::string::npos) << r.second;
  // Regression: the rank rule named the logits "logProb". (Rank 3 and more are K-dimensional
  // logits, which this extension takes.)
  DeviceTensor x1(ACL_FLOAT, {24}), out1(ACL_FLOAT, {24});
  r = grad(x1.get(), lse.get(), out1.get());
  EXPECT_EQ(r.first, 561002);
  EXPECT_EQ(r.second,
            "aclnnCpuCrossEntropyLossGradFromLogits: logits has shape [24] but must be (N, C) or "
            "(N, C, d1, ..., dK).");
  DeviceTensor lse5(ACL_FLOAT, {5});
  r = grad(x.get(), lse5.get(), out.get());
  EXPECT_EQ(r.first, 561002);
  EXPECT_NE(r.second.find("lse has shape [5]"), std::string::npos) << r.second;
  // Another view of the logits' bytes (here: its transpose) is not "in place".
  int64_t shape[] = {4, 6}, strides[] = {1, 4}, storage[] = {24};
  aclTensor* xt =
      aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, x.data());
  r = grad(x.get(), lse.get(), xt);
  EXPECT_EQ(r.first, 161002);
  EXPECT_NE(r.second.find("out shares its data address with logits but not its strides"),
            std::string::npos)
      << r.second;
  aclDestroyTensor(xt);
  // Regression (found by fuzz/phase1_fuzz under UBSan): logits with a null data address and an
  // offset; the in-place check offset the null pointer before the null address was reported.
  const int64_t big_storage[] = {100};
  aclTensor* xnull =
      aclCreateTensor(shape, 2, ACL_FLOAT, strides, 47, ACL_FORMAT_ND, big_storage, 1, nullptr);
  ASSERT_NE(xnull, nullptr);
  r = grad(xnull, lse.get(), out.get());
  EXPECT_EQ(r.first, 161001);
  EXPECT_NE(r.second.find("tensor logits has a null data address"), std::string::npos) << r.second;
  // Both null at the same offset with other strides: the null address is the error, not a
  // mismatched in-place view.
  const int64_t row_major[] = {6, 1};
  aclTensor* onull =
      aclCreateTensor(shape, 2, ACL_FLOAT, row_major, 47, ACL_FORMAT_ND, big_storage, 1, nullptr);
  ASSERT_NE(onull, nullptr);
  r = grad(xnull, lse.get(), onull);
  EXPECT_EQ(r.first, 161001);
  EXPECT_NE(r.second.find("tensor logits has a null data address"), std::string::npos) << r.second;
  aclDestroyTensor(onull);
  aclDestroyTensor(xnull);
  EXPECT_TRUE(out.Untouched());
  EXPECT_EQ(x.Get(), std::vector<double>(24, 0.5));

  // Lean forward: lseOut is FLOAT, also for a 16-bit input.
  DeviceTensor lse_b(ACL_BF16, {4});
  loss.FillCanaries();
  const int st = aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
      xb.get(), target.get(), nullptr, nullptr, -100, 0.0, 0.0, false, loss.get(), z.get(),
      lse_b.get(), &ws, &ex);
  EXPECT_EQ(st, 161002);
  const std::string msg = testing_support::TakeMessage();
  EXPECT_NE(msg.find("aclnnCpuCrossEntropyLossLse: lseOut has dtype BF16"), std::string::npos)
      << msg;
  EXPECT_TRUE(loss.Untouched());
}

// The forward with the gradient (aclnnCpuCrossEntropyLossWithGrad) gives the bits of the lean
// forward followed by the gradient from the logits on its lse, out of place and in place, on
// every dtype, layout and reduction (the table checks its accuracy; this checks the claim of
// equality that lets the torch path switch between them).
TEST(LeanCrossEntropy, WithGradIsLseThenGradFromLogits) {
  const int64_t n = 37, c = 1000;
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    for (Layout l : {Layout::kContiguous, Layout::kTransposed}) {
      for (const char* red : {"mean", "none", "sum"}) {
        SCOPED_TRACE(std::string(red) + " dtype " + std::to_string(dt) + " layout " +
                     testing_support::LayoutName(l));
        std::mt19937_64 rng(13);
        const bool none = std::string(red) == "none";
        const std::vector<int64_t> ls = none ? std::vector<int64_t>{n} : std::vector<int64_t>{};
        DeviceTensor x(dt, {n, c}, l), x2(dt, {n, c}, l), grad(dt, {n, c}, l),
            ref_grad(dt, {n, c}, l);
        DeviceTensor g(dt, ls), target(ACL_INT64, {n}), w(ACL_FLOAT, {c});
        DeviceTensor loss1(ACL_FLOAT, ls), z1(ACL_FLOAT, ls), lse1(ACL_FLOAT, {n});
        DeviceTensor loss2(ACL_FLOAT, ls), z2(ACL_FLOAT, ls), lse2(ACL_FLOAT, {n});
        DeviceTensor loss3(ACL_FLOAT, ls), z3(ACL_FLOAT, ls), lse3(ACL_FLOAT, {n});
        const std::vector<double> xv = x.Rounded(testing_support::Normal(rng, n * c, 0.0, 2.0));
        x.Set(xv);
        x2.Set(xv);
        g.Set(testing_support::Uniform(rng, g.numel(), 0.5, 1.5));
        std::vector<double> t(static_cast<size_t>(n));
        for (size_t i = 0; i < t.size(); ++i)
          t[i] = i % 7 == 3 ? -100.0 : static_cast<double>((i * 131) % c);
        target.Set(t);
        w.Set(testing_support::Uniform(rng, c, 0.5, 2.0));
        char* r = const_cast<char*>(red);
        // The two-call path.
        OpResult st = RunOp(
            [&](uint64_t* ws, aclOpExecutor** ex) {
              return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(x.get(), target.get(), w.get(), r,
                                                                 -100, 0.1, 1e-3, true, loss1.get(),
                                                                 z1.get(), lse1.get(), ws, ex);
            },
            aclnnCpuCrossEntropyLossLse);
        ASSERT_EQ(st.status, 0) << st.message;
        st = RunOp(
            [&](uint64_t* ws, aclOpExecutor** ex) {
              return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
                  g.get(), x.get(), target.get(), w.get(), nullptr, lse1.get(), r, -100, 0.1, 1e-3,
                  ref_grad.get(), ws, ex);
            },
            aclnnCpuCrossEntropyLossGradFromLogits);
        ASSERT_EQ(st.status, 0) << st.message;
        // One call, out of place and in place.
        auto with_grad = [&](DeviceTensor& in, DeviceTensor& out, DeviceTensor& loss,
                             DeviceTensor& z, DeviceTensor& lse) {
          return RunOp(
              [&](uint64_t* ws, aclOpExecutor** ex) {
                return aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
                    in.get(), target.get(), w.get(), g.get(), r, -100, 0.1, 1e-3, true, loss.get(),
                    z.get(), lse.get(), out.get(), ws, ex);
              },
              aclnnCpuCrossEntropyLossWithGrad);
        };
        st = with_grad(x, grad, loss2, z2, lse2);
        ASSERT_EQ(st.status, 0) << st.message;
        EXPECT_EQ(x.Get(), xv);
        st = with_grad(x2, x2, loss3, z3, lse3);
        ASSERT_EQ(st.status, 0) << st.message;
        const std::vector<double> want = ref_grad.Get();
        EXPECT_EQ(grad.Get(), want);
        EXPECT_EQ(x2.Get(), want);
        EXPECT_TRUE(x2.CanariesOutsideViewIntact());
        for (const DeviceTensor* o : {&loss2, &loss3}) EXPECT_EQ(o->Get(), loss1.Get());
        for (const DeviceTensor* o : {&lse2, &lse3}) EXPECT_EQ(o->Get(), lse1.Get());
        EXPECT_EQ(z2.Get(), z1.Get());
      }
    }
  }
}

TEST(LeanCrossEntropy, WithGradValidation) {
  DeviceTensor x(ACL_FLOAT, {4, 6}), target(ACL_INT64, {4}), loss(ACL_FLOAT, {}), z(ACL_FLOAT, {}),
      lse(ACL_FLOAT, {4}), out(ACL_FLOAT, {4, 6}), out_bad(ACL_FLOAT, {4, 7}),
      g_none(ACL_FLOAT, {4});
  x.Set(std::vector<double>(24, 0.5));
  target.Set({0, 1, 2, 3});
  auto call = [&](const aclTensor* g, const aclTensor* o) {
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    const int st = aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
        x.get(), target.get(), nullptr, g, nullptr, -100, 0.0, 0.0, false, loss.get(), z.get(),
        lse.get(), o, &ws, &ex);
    return std::make_pair(st, testing_support::TakeMessage());
  };
  auto r = call(nullptr, nullptr);
  EXPECT_EQ(r.first, 161001);
  EXPECT_NE(r.second.find("aclnnCpuCrossEntropyLossWithGrad: gradOut is null"), std::string::npos)
      << r.second;
  r = call(nullptr, out_bad.get());
  EXPECT_EQ(r.first, 561002);
  EXPECT_NE(r.second.find("gradOut has shape [4, 7]"), std::string::npos) << r.second;
  r = call(g_none.get(), out.get());  // "mean" takes a scalar gradLoss
  EXPECT_EQ(r.first, 561002);
  EXPECT_NE(r.second.find("gradLossOptional"), std::string::npos) << r.second;
  int64_t shape[] = {4, 6}, strides[] = {1, 4}, storage[] = {24};
  aclTensor* xt =
      aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, x.data());
  r = call(nullptr, xt);
  EXPECT_EQ(r.first, 161002);
  EXPECT_NE(r.second.find("gradOut shares its data address with input but not its strides"),
            std::string::npos)
      << r.second;
  aclDestroyTensor(xt);
  for (const DeviceTensor* o : {&loss, &lse, &out}) EXPECT_TRUE(o->Untouched());
  EXPECT_EQ(x.Get(), std::vector<double>(24, 0.5));
}
