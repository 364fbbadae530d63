// Outputs of kStreamingOutputBytes or more are written with non-temporal stores (16-bit outputs
// two f32 vectors at a time), by all four operators. Every row of such an output must have the bits
// of the same row computed alone (a small output, plain stores), whatever the row's alignment: the
// inputs are one row broadcast (outer stride 0) and C is odd, so output rows start at every
// alignment.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "device_tensor.h"
#include "kernels/row_kernels.h"

using namespace testing_support;

namespace {

constexpr int64_t kC = 4099;

// n x kC output rows (n = 1: the plain-store reference row).
int64_t RowsFor(aclDataType dt) {
  const int64_t bytes = static_cast<int64_t>(aclnn_cpu::kStreamingOutputBytes);
  return bytes / (kC * DtypeBytes(dt)) + 3;
}

struct Broadcast {
  aclTensor* t = nullptr;
  Broadcast(aclDataType dt, int64_t n, void* row) {
    const int64_t shape[] = {n, kC}, strides[] = {0, 1}, storage[] = {kC};
    t = aclCreateTensor(shape, 2, dt, strides, 0, ACL_FORMAT_ND, storage, 1, row);
  }
  ~Broadcast() { aclDestroyTensor(t); }
};

// Runs `op(n, out)` for n = RowsFor(dt) and n = 1; every big row must equal the single row.
template <typename Op>
void ExpectRowsMatchSingleRow(aclDataType dt, Op&& op) {
  const int64_t n = RowsFor(dt);
  ASSERT_GE(static_cast<uint64_t>(n * kC * DtypeBytes(dt)), aclnn_cpu::kStreamingOutputBytes);
  DeviceTensor big(dt, {n, kC}), one(dt, {1, kC});
  ASSERT_EQ(op(n, big.get()), 0) << aclGetRecentErrMsg();
  ASSERT_EQ(op(1, one.get()), 0) << aclGetRecentErrMsg();
  const size_t row = static_cast<size_t>(kC * DtypeBytes(dt));
  const auto* b = static_cast<const unsigned char*>(big.data());
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(std::memcmp(b + i * row, one.data(), row), 0) << "row " << i << " of " << n;
  }
}

TEST(StreamingStores, LogSoftmaxBackwardRowsMatchPlainStores) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    std::mt19937_64 rng(7);
    DeviceTensor g(dt, {kC}), y(dt, {kC});
    g.Set(Normal(rng, kC, 0.0, 1.0));
    y.Set(Uniform(rng, kC, -12.0, -6.0));
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(target);
      ExpectRowsMatchSingleRow(dt, [&](int64_t n, aclTensor* out) {
        Broadcast bg(dt, n, g.data()), by(dt, n, y.data());
        return RunOp(
                   [&](uint64_t* ws, aclOpExecutor** ex) {
                     return aclnnLogSoftmaxBackwardGetWorkspaceSize(bg.t, by.t, -1, out, ws, ex);
                   },
                   aclnnLogSoftmaxBackward)
            .status;
      });
    });
  }
}

TEST(StreamingStores, CrossEntropyLossGradRowsMatchPlainStores) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    std::mt19937_64 rng(8);
    DeviceTensor lp(dt, {kC}), w(ACL_FLOAT, {kC}), g(dt, {});
    lp.Set(Uniform(rng, kC, -14.0, -6.0));
    w.Set(Uniform(rng, kC, 0.5, 2.0));
    g.Set({0.75});
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(target);
      ExpectRowsMatchSingleRow(dt, [&](int64_t n, aclTensor* out) {
        // "sum": each row's coefficient depends on its own target only.
        DeviceTensor target(ACL_INT64, {n});
        target.Set(std::vector<double>(static_cast<size_t>(n), 17.0));
        Broadcast blp(dt, n, lp.data());
        return RunOp(
                   [&](uint64_t* ws, aclOpExecutor** ex) {
                     return aclnnCrossEntropyLossGradGetWorkspaceSize(
                         g.get(), blp.t, target.get(), w.get(), nullptr, nullptr,
                         const_cast<char*>("sum"), -100, 0.1, 0.0, out, ws, ex);
                   },
                   aclnnCrossEntropyLossGrad)
            .status;
      });
    });
  }
}

TEST(StreamingStores, LogSoftmaxRowsMatchPlainStores) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    std::mt19937_64 rng(9);
    DeviceTensor x(dt, {kC});
    x.Set(Normal(rng, kC, 0.0, 3.0));
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(target);
      ExpectRowsMatchSingleRow(dt, [&](int64_t n, aclTensor* out) {
        Broadcast bx(dt, n, x.data());
        return RunOp(
                   [&](uint64_t* ws, aclOpExecutor** ex) {
                     return aclnnLogSoftmaxGetWorkspaceSize(bx.t, -1, out, ws, ex);
                   },
                   aclnnLogSoftmax)
            .status;
      });
    });
  }
}

TEST(StreamingStores, CrossEntropyLossLogProbRowsMatchPlainStores) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    std::mt19937_64 rng(10);
    DeviceTensor x(dt, {kC});
    x.Set(Normal(rng, kC, 0.0, 3.0));
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(target);
      ExpectRowsMatchSingleRow(dt, [&](int64_t n, aclTensor* log_prob) {
        DeviceTensor t(ACL_INT64, {n}), loss(dt, {n}), zloss(dt, {n}), lse(dt, {n});
        t.Set(std::vector<double>(static_cast<size_t>(n), 5.0));
        Broadcast bx(dt, n, x.data());
        return RunOp(
                   [&](uint64_t* ws, aclOpExecutor** ex) {
                     return aclnnCrossEntropyLossGetWorkspaceSize(
                         bx.t, t.get(), nullptr, const_cast<char*>("none"), -100, 0.1, 1e-3, true,
                         loss.get(), log_prob, zloss.get(), lse.get(), ws, ex);
                   },
                   aclnnCrossEntropyLoss)
            .status;
      });
    });
  }
}

}  // namespace
