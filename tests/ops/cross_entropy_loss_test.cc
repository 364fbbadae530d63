// aclnnCrossEntropyLoss through the public API.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "ce_problem.h"
#include "check.h"
#include "device_tensor.h"
#include "reference.h"
#include "runtime/parallel.h"

using namespace testing_support;

namespace {

struct CeFwdTensors {
  std::unique_ptr<DeviceTensor> input, target, weight, loss, log_prob, zloss, lse;
};

CeFwdTensors MakeTensors(const CeConfig& cfg) {
  CeFwdTensors t;
  const std::vector<int64_t> scalar = cfg.ScalarShape();
  t.input =
      std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{cfg.n, cfg.c}, cfg.layout);
  t.target =
      std::make_unique<DeviceTensor>(cfg.target_dtype, std::vector<int64_t>{cfg.n}, cfg.layout);
  t.loss = std::make_unique<DeviceTensor>(cfg.dtype, scalar, cfg.layout);
  t.log_prob =
      std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{cfg.n, cfg.c}, cfg.layout);
  t.zloss = std::make_unique<DeviceTensor>(cfg.dtype, scalar, cfg.layout);
  t.lse = std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{cfg.n}, cfg.layout);
  if (cfg.weight) {
    t.weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{cfg.c}, cfg.layout);
  }
  return t;
}

OpResult RunCe(const CeConfig& cfg, const CeFwdTensors& t, bool return_zloss,
               const char* reduction) {
  return RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGetWorkspaceSize(
            t.input->get(), t.target->get(), t.weight ? t.weight->get() : nullptr,
            const_cast<char*>(reduction), cfg.ignore_index, cfg.label_smoothing, cfg.zloss_scale,
            return_zloss, t.loss->get(), t.log_prob->get(), t.zloss->get(), t.lse->get(), ws, ex);
      },
      aclnnCrossEntropyLoss);
}

// f32 error bounds of the forward's outputs, derived per row: lse carries the blocked sum of
// exps (<= 264 roundings, absolute in the log) plus the rounding of max + log; each loss term
// inherits it times its weight, and the smoothing dot product adds 264 roundings relative to
// sum_c |w_c (x_c - max)|.
::testing::AssertionResult CheckCe(const CeConfig& cfg, std::map<std::string, double>* worst) {
  std::mt19937_64 rng(cfg.seed);
  CeFwdTensors t = MakeTensors(cfg);
  const std::vector<double> x = t.input->Rounded(Normal(rng, cfg.n * cfg.c, 0.0, 4.0));
  t.input->Set(x);
  const std::vector<int64_t> target = RandomTargets(rng, cfg);
  t.target->Set(AsDoubles(target));
  std::vector<double> w;
  if (cfg.weight) {
    w = t.weight->Rounded(Normal(rng, cfg.c, 2.0, 3.0));
    t.weight->Set(w);
  }
  const OpResult r = RunCe(cfg, t, true, ReductionString(cfg.reduction));
  if (r.status != 0) return ::testing::AssertionFailure() << r.status << ": " << r.message;
  const ref::CrossEntropyResult e = ref::CrossEntropyLoss(RefArgs(cfg, target, w), x);
  const tolerance::CrossEntropyBounds b =
      tolerance::CrossEntropyLossBound(RefArgs(cfg, target, w), x, e);
  ErrorStats s_lp, s_loss;
  auto res = CheckClose(t.log_prob->Get(), e.log_prob, b.log_prob, cfg.dtype, cfg.dtype, &s_lp);
  if (!res) return res << " (logProbOut)";
  res = CheckClose(t.loss->Get(), e.loss, b.loss, cfg.dtype, cfg.dtype, &s_loss);
  if (!res) return res << " (lossOut)";
  res = CheckClose(t.zloss->Get(), e.zloss, b.zloss, cfg.dtype, cfg.dtype);
  if (!res) return res << " (zlossOut)";
  if (cfg.zloss_scale != 0.0) {
    res = CheckClose(t.lse->Get(), e.lse, b.lse, cfg.dtype, cfg.dtype);
    if (!res) return res << " (lseForZlossOut)";
  } else if (!t.lse->Untouched()) {
    return ::testing::AssertionFailure() << "lseForZlossOut written although the scale is 0";
  }
  if (worst) {
    const std::string k = std::to_string(cfg.dtype);
    (*worst)["logProb " + k] = std::max((*worst)["logProb " + k], s_lp.max_ulp);
    (*worst)["loss " + k] = std::max((*worst)["loss " + k], s_loss.max_ulp);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(CrossEntropyLossAccuracy, Randomised) {
  std::map<std::string, double> worst;
  std::mt19937_64 pick(99);
  const int64_t sizes[] = {1, 2, 7, 16, 33, 257, 1000, 3001};
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
      for (auto red : {ref::Reduction::kNone, ref::Reduction::kMean, ref::Reduction::kSum}) {
        for (bool weight : {false, true}) {
          for (double ls : {0.0, 0.1, 1.0}) {
            for (double z : {0.0, 1e-3}) {
              CeConfig cfg;
              cfg.dtype = dt;
              cfg.reduction = red;
              cfg.weight = weight;
              cfg.label_smoothing = ls;
              cfg.zloss_scale = z;
              cfg.n = sizes[pick() % 8];
              cfg.c = sizes[pick() % 8];
              if (cfg.n * cfg.c > 200000) cfg.c = 200000 / cfg.n;
              cfg.ignore_index = (pick() % 2) ? -100 : static_cast<int64_t>(pick() % cfg.c);
              cfg.layout = kAllLayouts[pick() % 4];
              cfg.target_dtype = (pick() % 2) ? ACL_INT64 : ACL_INT32;
              cfg.scalar_as_1d = pick() % 2;
              cfg.seed = pick();
              ASSERT_TRUE(CheckCe(cfg, &worst)) << cfg.Name();
            }
          }
        }
      }
    }
  });
  for (const auto& kv : worst) {
    std::printf("CrossEntropyLoss %s: worst error %.3f ulp\n", kv.first.c_str(), kv.second);
  }
}

// Deterministic: the same bits for 1 and 2 threads.
TEST(CrossEntropyLossAccuracy, SameBitsForAnyThreadCount) {
  CeConfig cfg;
  cfg.n = 300;
  cfg.c = 700;
  cfg.weight = true;
  cfg.label_smoothing = 0.1;
  cfg.zloss_scale = 1e-3;
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3}) {
    aclnn_cpu::SetNumThreads(threads);
    std::mt19937_64 rng(5);
    CeFwdTensors t = MakeTensors(cfg);
    t.input->Set(Normal(rng, cfg.n * cfg.c, 0.0, 4.0));
    t.target->Set(AsDoubles(RandomTargets(rng, cfg)));
    t.weight->Set(Normal(rng, cfg.c, 2.0, 3.0));
    ASSERT_EQ(RunCe(cfg, t, true, "mean").status, 0);
    std::vector<double> r = t.log_prob->Get();
    r.push_back(t.loss->Get()[0]);
    r.push_back(t.zloss->Get()[0]);
    results.push_back(r);
  }
  aclnn_cpu::SetNumThreads(0);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(CrossEntropyLossExample, DocumentedValues) {
  CeConfig cfg;
  cfg.n = 2;
  cfg.c = 5;
  CeFwdTensors t = MakeTensors(cfg);
  t.input->Set({5, 0, 3, 3, 7, 9, 3, 5, 2, 4});
  t.target->Set({0, 0});
  ASSERT_EQ(RunCe(cfg, t, false, "mean").status, 0);
  EXPECT_NEAR(t.loss->Get()[0], 1.093754, 1e-6);
  const double lp[] = {-2.159461, -7.159461, -4.159461, -4.159461, -0.159461,
                       -0.028047, -6.028047, -4.028047, -7.028047, -5.028047};
  const std::vector<double> o = t.log_prob->Get();
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(o[i], lp[i], 1e-6) << i;
  EXPECT_TRUE(t.zloss->Untouched());  // returnZloss false
  EXPECT_TRUE(t.lse->Untouched());    // scale 0
}

// The extension's point: a bf16 input's loss rounded once to fp32, not to bf16 (CANN's).
TEST(CpuCrossEntropyLoss, Fp32LossForBf16Input) {
  CeConfig cfg;
  cfg.n = 2;
  cfg.c = 5;
  cfg.dtype = ACL_BF16;
  CeFwdTensors t = MakeTensors(cfg);
  t.input->Set({5, 0, 3, 3, 7, 9, 3, 5, 2, 4});  // exact in bf16
  t.target->Set({0, 0});
  ASSERT_EQ(RunCe(cfg, t, false, "mean").status, 0);
  EXPECT_EQ(t.loss->Get()[0], 1.09375);  // 1.093754 rounded to bf16
  DeviceTensor loss(ACL_FLOAT, {}), zloss(ACL_FLOAT, {}), lse(ACL_FLOAT, {2});
  DeviceTensor log_prob(ACL_BF16, {2, 5});
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCpuCrossEntropyLossGetWorkspaceSize(
            t.input->get(), t.target->get(), nullptr, const_cast<char*>("mean"), -100, 0.0, 1e-2,
            true, loss.get(), log_prob.get(), zloss.get(), lse.get(), ws, ex);
      },
      aclnnCpuCrossEntropyLoss);
  ASSERT_EQ(r.status, 0) << r.message;
  // lse of the rows: 7.159461 and 9.028047; z-loss 0.01 * mean of their squares.
  const double zl = 0.01 * (7.159461 * 7.159461 + 9.028047 * 9.028047) / 2;
  EXPECT_NEAR(zloss.Get()[0], zl, 1e-6);
  EXPECT_NEAR(loss.Get()[0], 1.093754 + zl, 2e-6);
  EXPECT_NEAR(lse.Get()[0], 7.159461, 1e-6);
  EXPECT_NEAR(lse.Get()[1], 9.028047, 1e-6);
  EXPECT_EQ(log_prob.Get(), t.log_prob->Get());  // logProb is the same bf16 as CANN's operator
}

// A -inf logit (a masked class) that is not the target: without label smoothing the loss is
// finite, as PyTorch's (the smoothing term, sum_c x_c - lse = -inf, was multiplied by a smoothing
// of 0, and 0 * inf made the loss NaN); with smoothing the loss is +inf. Both the row path and
// the split-row path (one row, more threads than rows).
TEST(CrossEntropyLossInfinities, MaskedLogitWithoutSmoothingGivesAFiniteLoss) {
  for (int64_t n : {2, 1}) {
    for (double ls : {0.0, 0.1}) {
      for (ref::Reduction red : {ref::Reduction::kMean, ref::Reduction::kNone}) {
        CeConfig cfg;
        cfg.reduction = red;
        cfg.n = n;
        cfg.c = 40000;  // two chunks: the split path divides a single row across threads
        cfg.label_smoothing = ls;
        CeFwdTensors t = MakeTensors(cfg);
        std::vector<double> x(static_cast<size_t>(n * cfg.c), 0.0);
        x[1] = -HUGE_VAL;
        x[0] = 2.0;
        t.input->Set(x);
        t.target->Set(std::vector<double>(static_cast<size_t>(n), 0.0));
        const OpResult r = RunCe(cfg, t, false, ReductionString(red));
        ASSERT_EQ(r.status, 0) << r.message;
        // Row 0: -(2 - log(e^2 + 39998)) (one class at -inf); row 1, all zeros: log(40000).
        const double l0 = -(2.0 - std::log(std::exp(2.0) + 39998.0));
        const double l1 = std::log(40000.0);
        const std::vector<double> loss = t.loss->Get();
        const std::string what = "n " + std::to_string(n) + " " + ReductionString(red);
        if (ls == 0.0) {
          const double want = red == ref::Reduction::kNone || n == 1 ? l0 : (l0 + l1) / 2;
          EXPECT_NEAR(loss[0], want, 1e-5) << what;
          if (n == 2 && red == ref::Reduction::kNone) {
            EXPECT_NEAR(loss[1], l1, 1e-5) << what;
          }
        } else {
          EXPECT_EQ(loss[0], HUGE_VAL) << what;
        }
      }
    }
  }
}

TEST(CrossEntropyLossTargets, OutOfRangeWritesNothing) {
  CeConfig cfg;
  cfg.n = 3;
  cfg.c = 4;
  CeFwdTensors t = MakeTensors(cfg);
  t.input->Set(std::vector<double>(12, 0.5));
  t.target->Set({1, 4, 0});
  const OpResult r = RunCe(cfg, t, true, "mean");
  EXPECT_EQ(r.failed_step, 3);
  EXPECT_EQ(r.status, ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(r.message.find("aclnnCrossEntropyLoss: target[1] = 4"), std::string::npos) << r.message;
  EXPECT_TRUE(t.loss->Untouched());
  EXPECT_TRUE(t.log_prob->Untouched());
  EXPECT_TRUE(t.zloss->Untouched());
  EXPECT_TRUE(t.lse->Untouched());
}

TEST(CrossEntropyLossTargets, EmptyBatch) {
  for (const char* red : {"mean", "sum"}) {
    CeConfig cfg;
    cfg.n = 0;
    cfg.c = 4;
    cfg.reduction = std::string(red) == "sum" ? ref::Reduction::kSum : ref::Reduction::kMean;
    CeFwdTensors t = MakeTensors(cfg);
    ASSERT_EQ(RunCe(cfg, t, true, red).status, 0);
    // PyTorch's convention: the sum of nothing is 0, the mean of nothing is NaN.
    if (cfg.reduction == ref::Reduction::kSum) {
      EXPECT_EQ(t.loss->Get()[0], 0.0);
    } else {
      EXPECT_TRUE(std::isnan(t.loss->Get()[0]));
    }
  }
}

struct CeFwdValidationCase {
  const char* name;
  aclDataType input = ACL_FLOAT, loss = ACL_FLOAT, lp = ACL_FLOAT, zl = ACL_FLOAT, lse = ACL_FLOAT,
              target = ACL_INT64, weight = ACL_FLOAT;
  std::vector<int64_t> input_shape = {2, 3}, target_shape = {2}, weight_shape = {3},
                       loss_shape = {}, lp_shape = {2, 3}, zl_shape = {}, lse_shape = {2};
  bool has_weight = true;
  const char* reduction = "mean";
  double ls = 0.0, z = 0.0;
  int null_arg = 0;  // 1 input, 2 target, 3 lossOut, 4 logProbOut, 5 zlossOut, 6 lseOut
  bool ext = false;  // through aclnnCpuCrossEntropyLoss (fp32 loss outputs for 16-bit inputs)
  int expect = 0;
  const char* message = "";
};

std::vector<CeFwdValidationCase> CeFwdCases() {
  std::vector<CeFwdValidationCase> v;
  auto add = [&](const char* name, int expect, const char* msg, auto&& edit) {
    CeFwdValidationCase c;
    c.name = name;
    c.expect = expect;
    c.message = msg;
    edit(c);
    v.push_back(c);
  };
  const char* outs[] = {"input", "target", "lossOut", "logProbOut", "zlossOut", "lseForZlossOut"};
  const char* names[] = {"null_input",      "null_target",   "null_lossOut",
                         "null_logProbOut", "null_zlossOut", "null_lseForZlossOut"};
  for (int k = 0; k < 6; ++k) {
    static std::string msgs[6];
    msgs[k] = std::string(outs[k]) + " is null";
    add(names[k], 161001, msgs[k].c_str(), [k](auto& c) { c.null_arg = k + 1; });
  }
  add("input_f64", 161002, "input has dtype DOUBLE", [](auto& c) { c.input = ACL_DOUBLE; });
  add("loss_dtype", 161002, "lossOut has dtype FLOAT16", [](auto& c) { c.loss = ACL_FLOAT16; });
  add("lp_dtype", 161002, "logProbOut has dtype BF16", [](auto& c) { c.lp = ACL_BF16; });
  add("zl_dtype", 161002, "zlossOut has dtype DOUBLE", [](auto& c) { c.zl = ACL_DOUBLE; });
  add("lse_dtype", 161002, "lseForZlossOut has dtype FLOAT16",
      [](auto& c) { c.lse = ACL_FLOAT16; });
  add("target_dtype", 161002, "target has dtype UINT8", [](auto& c) { c.target = ACL_UINT8; });
  add("weight_dtype", 161002, "weightOptional has dtype FLOAT16",
      [](auto& c) { c.weight = ACL_FLOAT16; });
  add("weight_f64", 0, "", [](auto& c) { c.weight = ACL_DOUBLE; });  // the default profile's
  add("reduction", 561002, "reductionOptional \"batchmean\"",
      [](auto& c) { c.reduction = "batchmean"; });
  add("ls", 561002, "labelSmoothing 2 is outside", [](auto& c) { c.ls = 2.0; });
  add("z", 561002, "lseSquareScaleForZloss -inf", [](auto& c) { c.z = -HUGE_VAL; });
  add("input_1d", 561002, "input has shape [6] but must be 2-d",
      [](auto& c) { c.input_shape = {6}; });
  add("target_shape", 561002, "target has shape [2, 1]", [](auto& c) { c.target_shape = {2, 1}; });
  add("weight_shape", 561002, "weightOptional has shape [2]",
      [](auto& c) { c.weight_shape = {2}; });
  add("loss_shape_mean", 561002, "lossOut has shape [2]", [](auto& c) { c.loss_shape = {2}; });
  add("loss_shape_none", 561002, "lossOut has shape []", [](auto& c) {
    c.reduction = "none";
    c.zl_shape = {2};
  });
  add("lp_shape", 561002, "logProbOut has shape [3, 2]", [](auto& c) { c.lp_shape = {3, 2}; });
  add("zl_shape", 561002, "zlossOut has shape [3]", [](auto& c) { c.zl_shape = {3}; });
  add("lse_shape", 561002, "lseForZlossOut has shape [1]", [](auto& c) { c.lse_shape = {1}; });
  add("ok_none", 0, "", [](auto& c) {
    c.reduction = "none";
    c.loss_shape = c.zl_shape = {2};
  });
  add("ok_sum_1", 0, "", [](auto& c) {
    c.reduction = "sum";
    c.loss_shape = c.zl_shape = {1};
  });
  add("ok_null_reduction", 0, "", [](auto& c) { c.reduction = nullptr; });
  add("ok_zloss", 0, "", [](auto& c) { c.z = 0.01; });
  add("ok_empty_C", 0, "", [](auto& c) {
    c.input_shape = c.lp_shape = {2, 0};
    c.weight_shape = {0};
  });
  // CANN's operator keeps CANN's rule: the loss-like outputs share the input's dtype.
  add("cann_f32_loss_for_bf16", 161002,
      "aclnnCrossEntropyLoss: lossOut has dtype FLOAT but input has dtype BF16",
      [](auto& c) { c.input = c.lp = c.zl = c.lse = ACL_BF16; });
  // The extension also takes FLOAT for them (each on its own) when the input is 16-bit.
  add("ext_ok_f32_stats_for_bf16", 0, "", [](auto& c) {
    c.ext = true;
    c.input = c.lp = ACL_BF16;
  });
  add("ext_ok_mixed_for_f16", 0, "", [](auto& c) {
    c.ext = true;
    c.input = c.lp = c.zl = ACL_FLOAT16;
  });
  add("ext_f16_loss_for_bf16", 161002,
      "aclnnCpuCrossEntropyLoss: lossOut has dtype FLOAT16 but must be FLOAT or the input's "
      "dtype BF16.",
      [](auto& c) {
        c.ext = true;
        c.input = c.lp = c.zl = c.lse = ACL_BF16;
        c.loss = ACL_FLOAT16;
      });
  add("ext_f32_input_f16_lse", 161002,
      "aclnnCpuCrossEntropyLoss: lseForZlossOut has dtype FLOAT16 but input has dtype FLOAT",
      [](auto& c) {
        c.ext = true;
        c.lse = ACL_FLOAT16;
      });
  add("ext_null_lossOut", 161001, "aclnnCpuCrossEntropyLoss: lossOut is null", [](auto& c) {
    c.ext = true;
    c.null_arg = 3;
  });
  return v;
}

class CrossEntropyLossValidation : public ::testing::TestWithParam<CeFwdValidationCase> {};

TEST_P(CrossEntropyLossValidation, CodeMessageAndCanaries) {
  const CeFwdValidationCase& c = GetParam();
  DeviceTensor input(c.input, c.input_shape), target(c.target, c.target_shape),
      weight(c.weight, c.weight_shape), loss(c.loss, c.loss_shape), lp(c.lp, c.lp_shape),
      zl(c.zl, c.zl_shape), lse(c.lse, c.lse_shape);
  input.Set(std::vector<double>(static_cast<size_t>(input.numel()), 0.5));
  target.Set(std::vector<double>(static_cast<size_t>(target.numel()), 1.0));
  weight.Set(std::vector<double>(static_cast<size_t>(weight.numel()), 1.0));
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const auto phase1 =
      c.ext ? aclnnCpuCrossEntropyLossGetWorkspaceSize : aclnnCrossEntropyLossGetWorkspaceSize;
  const int st =
      phase1(c.null_arg == 1 ? nullptr : input.get(), c.null_arg == 2 ? nullptr : target.get(),
             c.has_weight ? weight.get() : nullptr, const_cast<char*>(c.reduction), -100, c.ls, c.z,
             true, c.null_arg == 3 ? nullptr : loss.get(), c.null_arg == 4 ? nullptr : lp.get(),
             c.null_arg == 5 ? nullptr : zl.get(), c.null_arg == 6 ? nullptr : lse.get(), &ws, &ex);
  EXPECT_EQ(st, c.expect);
  const std::string msg = TakeMessage();
  if (c.expect != 0) {
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    EXPECT_TRUE(loss.Untouched() && lp.Untouched() && zl.Untouched() && lse.Untouched());
    return;
  }
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  }
  EXPECT_EQ((c.ext ? aclnnCpuCrossEntropyLoss : aclnnCrossEntropyLoss)(w, ws, ex, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  if (w) aclrtFree(w);
  EXPECT_TRUE(lp.CanariesOutsideViewIntact());
}

INSTANTIATE_TEST_SUITE_P(Rules, CrossEntropyLossValidation, ::testing::ValuesIn(CeFwdCases()),
                         [](const ::testing::TestParamInfo<CeFwdValidationCase>& i) {
                           return std::string(i.param.name);
                         });
