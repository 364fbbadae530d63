// Every operator gives the same bits for any thread count, on shapes that take each path:
// rows, split rows (fewer rows than threads), column tiles, gather, and the reductions.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "device_tensor.h"
#include "runtime/parallel.h"

using namespace testing_support;

namespace {

// Runs `op` (which fills and returns its outputs) for 1..4 threads and compares the bits.
void ExpectSameForAnyThreads(const std::string& what,
                             const std::function<std::vector<double>()>& op) {
  std::vector<double> first;
  for (int threads : {1, 2, 3, 4}) {
    aclnn_cpu::SetNumThreads(threads);
    const std::vector<double> r = op();
    if (threads == 1) {
      first = r;
    } else {
      ASSERT_EQ(r.size(), first.size());
      for (size_t i = 0; i < r.size(); ++i) {
        ASSERT_TRUE(r[i] == first[i] || (r[i] != r[i] && first[i] != first[i]))
            << what << ": element " << i << " differs with " << threads << " threads";
      }
    }
  }
  aclnn_cpu::SetNumThreads(0);
}

std::vector<double> LsmBwd(aclDataType dt, const std::vector<int64_t>& shape, int64_t dim,
                           Layout layout) {
  std::mt19937_64 rng(1);
  DeviceTensor g(dt, shape, layout), y(dt, shape, layout), out(dt, shape, layout);
  g.Set(Normal(rng, g.numel(), 0.1, 1.0));
  y.Set(Uniform(rng, y.numel(), -12.0, 0.0));
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), dim, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
  EXPECT_EQ(r.status, 0) << r.message;
  return out.Get();
}

std::vector<double> Lsm(aclDataType dt, const std::vector<int64_t>& shape, int64_t dim) {
  std::mt19937_64 rng(2);
  DeviceTensor x(dt, shape), out(dt, shape);
  x.Set(Normal(rng, x.numel(), 0.0, 3.0));
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxGetWorkspaceSize(x.get(), dim, out.get(), ws, ex);
      },
      aclnnLogSoftmax);
  EXPECT_EQ(r.status, 0) << r.message;
  return out.Get();
}

std::vector<double> CeGrad(aclDataType dt, int64_t n, int64_t c) {
  std::mt19937_64 rng(3);
  DeviceTensor g(dt, {}), lp(dt, {n, c}), target(ACL_INT64, {n}), w(ACL_FLOAT, {c}), lse(dt, {n}),
      out(dt, {n, c});
  g.Set({1.5});
  lp.Set(Uniform(rng, n * c, -12.0, 0.0));
  std::vector<double> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<double>((i * 7919) % c);
  target.Set(t);
  w.Set(Uniform(rng, c, 0.5, 2.0));
  lse.Set(Uniform(rng, n, 5.0, 10.0));
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGradGetWorkspaceSize(
            g.get(), lp.get(), target.get(), w.get(), nullptr, lse.get(), const_cast<char*>("mean"),
            -100, 0.1, 1e-3, out.get(), ws, ex);
      },
      aclnnCrossEntropyLossGrad);
  EXPECT_EQ(r.status, 0) << r.message;
  return out.Get();
}

std::vector<double> CeFwd(aclDataType dt, int64_t n, int64_t c) {
  std::mt19937_64 rng(4);
  DeviceTensor x(dt, {n, c}), target(ACL_INT64, {n}), w(ACL_FLOAT, {c}), loss(dt, {}),
      lp(dt, {n, c}), zl(dt, {}), lse(dt, {n});
  x.Set(Normal(rng, n * c, 0.0, 3.0));
  std::vector<double> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<double>((i * 31) % c);
  target.Set(t);
  w.Set(Uniform(rng, c, 0.5, 2.0));
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGetWorkspaceSize(
            x.get(), target.get(), w.get(), const_cast<char*>("mean"), -100, 0.1, 1e-3, true,
            loss.get(), lp.get(), zl.get(), lse.get(), ws, ex);
      },
      aclnnCrossEntropyLoss);
  EXPECT_EQ(r.status, 0) << r.message;
  std::vector<double> all = lp.Get();
  for (const auto* t2 : {&loss, &zl, &lse}) {
    const std::vector<double> v = t2->Get();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace

TEST(Determinism, LogSoftmaxBackward) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
    ExpectSameForAnyThreads("rows", [&] {
      return LsmBwd(dt, {64, 3000}, -1, Layout::kContiguous);
    });
    ExpectSameForAnyThreads("split rows", [&] {
      return LsmBwd(dt, {1, 70000}, -1, Layout::kContiguous);
    });
    ExpectSameForAnyThreads("split rows 3", [&] {
      return LsmBwd(dt, {3, 40000}, 1, Layout::kContiguous);
    });
    ExpectSameForAnyThreads("columns", [&] {
      return LsmBwd(dt, {8, 300, 96}, 1, Layout::kContiguous);
    });
    ExpectSameForAnyThreads("gather", [&] { return LsmBwd(dt, {40, 500}, 1, Layout::kPadded); });
  }
}

TEST(Determinism, LogSoftmax) {
  for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16}) {
    ExpectSameForAnyThreads("rows", [&] { return Lsm(dt, {64, 3000}, -1); });
    ExpectSameForAnyThreads("dim 0", [&] { return Lsm(dt, {300, 50}, 0); });
  }
}

TEST(Determinism, CrossEntropyLossGrad) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
    ExpectSameForAnyThreads("rows", [&] { return CeGrad(dt, 64, 3000); });
    ExpectSameForAnyThreads("split rows", [&] { return CeGrad(dt, 1, 70000); });
    ExpectSameForAnyThreads("split rows 3", [&] { return CeGrad(dt, 3, 33000); });
  }
}

TEST(Determinism, CrossEntropyLoss) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
    ExpectSameForAnyThreads("rows", [&] { return CeFwd(dt, 300, 700); });
    ExpectSameForAnyThreads("one row", [&] { return CeFwd(dt, 1, 70000); });
    ExpectSameForAnyThreads("split rows 3", [&] { return CeFwd(dt, 3, 40000); });
  }
}
