// Demo: one language-model loss step on aclnn-cpu, the way an NPU training loop runs it.
// Logits (N = 64 rows, C = 1000 classes) -> aclnnCrossEntropyLoss (label smoothing 0.1, z-loss
// 1e-4, class weights, an ignored row) -> aclnnCrossEntropyLossGrad with the forward's logProb
// and lse -> the gradient, checked against central finite differences of the forward loss.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "common.h"

static const int64_t N = 64, C = 1000;
static const double kSmoothing = 0.1, kZloss = 1e-4;

struct Device {
  void* ptr;
  aclTensor* tensor;
};

template <typename T>
static Device Make(const std::vector<T>& host, const std::vector<int64_t>& shape, aclDataType dt) {
  Device d = {nullptr, nullptr};
  CreateAclTensor(host, shape, &d.ptr, dt, &d.tensor);
  return d;
}

static void Free(Device& d) {
  aclDestroyTensor(d.tensor);
  aclrtFree(d.ptr);
}

static int RunWorkspace(aclOpExecutor* ex, uint64_t size, aclrtStream stream,
                        aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream)) {
  void* ws = nullptr;
  if (size > 0 && aclrtMalloc(&ws, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 1;
  int ret = run(ws, size, ex, stream);
  if (ret == ACL_SUCCESS) ret = aclrtSynchronizeStream(stream);
  if (ws != nullptr) aclrtFree(ws);
  return ret;
}

// Forward loss (mean) for the given logits; optionally returns logProb and lse on the device.
static float Forward(const std::vector<float>& logits, const Device& target, const Device& weight,
                     aclrtStream stream, Device* logProb, Device* lse) {
  Device input = Make(logits, {N, C}, ACL_FLOAT);
  Device loss = Make(std::vector<float>(1, 0), {}, ACL_FLOAT);
  Device lp = Make(std::vector<float>(N * C, 0), {N, C}, ACL_FLOAT);
  Device zl = Make(std::vector<float>(1, 0), {}, ACL_FLOAT);
  Device l = Make(std::vector<float>(N, 0), {N}, ACL_FLOAT);
  uint64_t size = 0;
  aclOpExecutor* ex = nullptr;
  char reduction[] = "mean";
  int ret = aclnnCrossEntropyLossGetWorkspaceSize(
      input.tensor, target.tensor, weight.tensor, reduction, -100, kSmoothing, kZloss, true,
      loss.tensor, lp.tensor, zl.tensor, l.tensor, &size, &ex);
  if (ret == ACL_SUCCESS) ret = RunWorkspace(ex, size, stream, aclnnCrossEntropyLoss);
  float value = NAN;
  if (ret == ACL_SUCCESS) {
    aclrtMemcpy(&value, sizeof(value), loss.ptr, sizeof(value), ACL_MEMCPY_DEVICE_TO_HOST);
  } else {
    LOG_PRINT("aclnnCrossEntropyLoss failed: %d %s\n", ret, aclGetRecentErrMsg());
  }
  Free(input);
  Free(loss);
  Free(zl);
  if (logProb != nullptr)
    *logProb = lp;
  else
    Free(lp);
  if (lse != nullptr)
    *lse = l;
  else
    Free(l);
  return value;
}

int main() {
  aclrtStream stream;
  int ret = Init(0, &stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::uniform_int_distribution<int64_t> cls(0, C - 1);
  std::vector<float> logits(N * C), weights(C);
  for (float& v : logits) v = normal(rng);
  for (float& w : weights) w = 0.5f + std::fabs(normal(rng)) * 0.25f;
  std::vector<int64_t> targets(N);
  for (int64_t& t : targets) t = cls(rng);
  targets[5] = -100;  // a padding position
  Device target = Make(targets, {N}, ACL_INT64);
  Device weight = Make(weights, {C}, ACL_FLOAT);

  Device logProb, lse;
  const float loss = Forward(logits, target, weight, stream, &logProb, &lse);
  LOG_PRINT("forward: loss (mean, label smoothing %.1f, z-loss %g) = %f\n", kSmoothing, kZloss,
            loss);

  // Backward: d(loss)/d(logits) with gradLoss = 1 and no gradient on the separate z-loss output.
  Device gradLoss = Make(std::vector<float>(1, 1.0f), {}, ACL_FLOAT);
  Device grad = Make(std::vector<float>(N * C, 0), {N, C}, ACL_FLOAT);
  uint64_t size = 0;
  aclOpExecutor* ex = nullptr;
  char reduction[] = "mean";
  ret = aclnnCrossEntropyLossGradGetWorkspaceSize(
      gradLoss.tensor, logProb.tensor, target.tensor, weight.tensor, nullptr, lse.tensor, reduction,
      -100, kSmoothing, kZloss, grad.tensor, &size, &ex);
  if (ret == ACL_SUCCESS) ret = RunWorkspace(ex, size, stream, aclnnCrossEntropyLossGrad);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("backward failed: %d\n", ret); return ret);
  std::vector<float> g(N * C);
  aclrtMemcpy(g.data(), g.size() * sizeof(float), grad.ptr, g.size() * sizeof(float),
              ACL_MEMCPY_DEVICE_TO_HOST);
  double norm = 0.0, row_sum = 0.0;
  for (int64_t j = 0; j < C; ++j) row_sum += g[j];
  for (float v : g) norm += static_cast<double>(v) * v;
  LOG_PRINT("backward: |grad| = %f, sum of row 0 = %.3e, row 5 (ignored) all zero: %s\n",
            std::sqrt(norm), row_sum, g[5 * C] == 0.0f && g[5 * C + 7] == 0.0f ? "yes" : "no");

  // Central finite differences of the forward through the library (f32 losses, so probe where
  // the gradient is large: the target logit and the largest other logit of a few rows).
  std::vector<std::vector<int64_t> > probes;
  const int64_t rows[] = {0, 17, 63};
  for (int64_t r : rows) {
    int64_t best = targets[r] == 0 ? 1 : 0;
    for (int64_t j = 0; j < C; ++j) {
      if (j != targets[r] && logits[r * C + j] > logits[r * C + best]) best = j;
    }
    probes.push_back({r, targets[r]});
    probes.push_back({r, best});
  }
  for (const auto& p : probes) {
    const int64_t k = p[0] * C + p[1];
    const float h = 1e-2f;
    std::vector<float> plus(logits), minus(logits);
    plus[k] += h;
    minus[k] -= h;
    const double fd =
        (static_cast<double>(Forward(plus, target, weight, stream, nullptr, nullptr)) -
         Forward(minus, target, weight, stream, nullptr, nullptr)) /
        (2.0 * h);
    LOG_PRINT(
        "d loss / d logit[%ld][%ld]: backward %+.6e, finite difference %+.6e (rel. diff "
        "%.1e)\n",
        static_cast<long>(p[0]), static_cast<long>(p[1]), g[k], fd,
        std::fabs(g[k] - fd) / std::fabs(fd));
  }

  Free(target);
  Free(weight);
  Free(logProb);
  Free(lse);
  Free(gradLoss);
  Free(grad);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
