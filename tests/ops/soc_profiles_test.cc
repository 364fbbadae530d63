// SoC profiles (docs/soc_profiles.md, ../shared/spec/soc_profiles.md): one table per profile,
// one row per rule. A row gives the call (operator, dtypes, shapes, targets, attributes) and
// either the refusal (status, the step that refuses, key words of the message; every output
// untouched) or, for an accepted call, the call under the default profile that must give the
// same bits (what the NPU computes: without the z-loss where it ignores it, with its ignore
// rule). The default profile has a table too, for the contrast; its own suites are unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "core/soc.h"
#include "device_tensor.h"
#include "run_op.h"

using testing_support::DeviceTensor;
using testing_support::OpResult;
using testing_support::RunOp;
using testing_support::TakeMessage;

namespace {

enum class Op { kLsmBwd, kLsm, kCeGrad, kCe, kCeExt };

struct Case {
  const char* name = "";
  Op op = Op::kCeGrad;
  aclDataType dtype = ACL_FLOAT;
  aclDataType target_dtype = ACL_INT64;
  int64_t n = 4, c = 5;
  int64_t target_len = -1;                      // -1: n
  std::vector<int64_t> targets = {0, 1, 2, 3};  // repeated to the target length
  const char* reduction = "mean";
  bool grad_loss_0d_for_none = false;  // gradLoss of the wrong shape for "none"
  int64_t ignore_index = -100;
  double ls = 0.0, z = 0.0;
  bool z_tensors = true;  // with z != 0: gradZloss and lse (gradient)
  // Refused: the status, the step (1: phase 1, 3: synchronize) and words of the message.
  int status = 0;
  int step = 1;
  std::vector<const char*> words;
  // Accepted: the call under the default profile that gives the same outputs.
  void (*as_default)(Case*) = nullptr;
};

// The tensors of one call, inputs filled from a fixed seed, outputs with canaries.
struct Tensors {
  std::vector<std::unique_ptr<DeviceTensor>> in, out;  // out: every output, in order
};

DeviceTensor* Add(std::vector<std::unique_ptr<DeviceTensor>>* v, aclDataType t,
                  std::vector<int64_t> shape) {
  v->push_back(std::make_unique<DeviceTensor>(t, std::move(shape)));
  return v->back().get();
}

std::vector<double> TargetValues(const Case& c) {
  const int64_t len = c.target_len < 0 ? c.n : c.target_len;
  std::vector<double> t(static_cast<size_t>(len));
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(c.targets[i % c.targets.size()]);
  return t;
}

OpResult Run(const Case& c, Tensors* t) {
  std::mt19937_64 rng(7);
  auto filled = [&](aclDataType dt, std::vector<int64_t> shape, double lo, double hi) {
    DeviceTensor* d = Add(&t->in, dt, std::move(shape));
    d->Set(d->Rounded(testing_support::Uniform(rng, d->numel(), lo, hi)));
    return d->get();
  };
  auto output = [&](aclDataType dt, std::vector<int64_t> shape) {
    DeviceTensor* d = Add(&t->out, dt, std::move(shape));
    d->FillCanaries();
    return d->get();
  };
  const std::vector<int64_t> rows = {c.n, c.c};
  const bool none = std::string(c.reduction) == "none";
  const std::vector<int64_t> scalar = none ? std::vector<int64_t>{c.n} : std::vector<int64_t>{};
  char* reduction = const_cast<char*>(c.reduction);
  switch (c.op) {
    case Op::kLsm: {
      aclTensor* self = filled(c.dtype, rows, -4.0, 4.0);
      aclTensor* out = output(c.dtype, rows);
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return aclnnLogSoftmaxGetWorkspaceSize(self, -1, out, ws, ex);
          },
          aclnnLogSoftmax);
    }
    case Op::kLsmBwd: {
      aclTensor* g = filled(c.dtype, rows, -1.0, 1.0);
      aclTensor* y = filled(c.dtype, rows, -4.0, -0.5);
      aclTensor* out = output(c.dtype, rows);
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return aclnnLogSoftmaxBackwardGetWorkspaceSize(g, y, -1, out, ws, ex);
          },
          aclnnLogSoftmaxBackward);
    }
    case Op::kCeGrad: {
      const std::vector<int64_t> gshape = c.grad_loss_0d_for_none ? std::vector<int64_t>{} : scalar;
      aclTensor* g = filled(c.dtype, gshape, 0.5, 2.0);
      aclTensor* lp = filled(c.dtype, rows, -4.0, -0.5);
      DeviceTensor* target = Add(&t->in, c.target_dtype, {c.target_len < 0 ? c.n : c.target_len});
      target->Set(TargetValues(c));
      aclTensor* gz = nullptr;
      aclTensor* lse = nullptr;
      if (c.z != 0.0 && c.z_tensors) {
        gz = filled(c.dtype, scalar, 0.5, 2.0);
        lse = filled(c.dtype, {c.n}, 1.0, 3.0);
      }
      aclTensor* out = output(c.dtype, rows);
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return aclnnCrossEntropyLossGradGetWorkspaceSize(g, lp, target->get(), nullptr, gz, lse,
                                                             reduction, c.ignore_index, c.ls, c.z,
                                                             out, ws, ex);
          },
          aclnnCrossEntropyLossGrad);
    }
    case Op::kCe:
    case Op::kCeExt: {
      aclTensor* x = filled(c.dtype, rows, -4.0, 4.0);
      DeviceTensor* target = Add(&t->in, c.target_dtype, {c.target_len < 0 ? c.n : c.target_len});
      target->Set(TargetValues(c));
      aclTensor* loss = output(c.dtype, scalar);
      aclTensor* lp = output(c.dtype, rows);
      aclTensor* zl = output(c.dtype, scalar);
      aclTensor* lse = output(c.dtype, {c.n});
      auto phase1 = c.op == Op::kCe ? aclnnCrossEntropyLossGetWorkspaceSize
                                    : aclnnCpuCrossEntropyLossGetWorkspaceSize;
      auto phase2 = c.op == Op::kCe ? aclnnCrossEntropyLoss : aclnnCpuCrossEntropyLoss;
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return phase1(x, target->get(), nullptr, reduction, c.ignore_index, c.ls, c.z, true,
                          loss, lp, zl, lse, ws, ex);
          },
          phase2);
    }
  }
  return OpResult{};
}

// Selects a profile for the scope of one check, then the default again.
class SocScope {
 public:
  explicit SocScope(const char* name) { EXPECT_TRUE(aclnn_cpu::SelectSoc(name).ok()) << name; }
  ~SocScope() { aclnn_cpu::SelectSoc(nullptr); }
};

void CheckCase(const char* soc, const Case& c) {
  SCOPED_TRACE(std::string(soc) + " / " + c.name);
  Tensors t;
  OpResult r;
  {
    SocScope scope(soc);
    r = Run(c, &t);
  }
  if (c.status != 0) {
    EXPECT_EQ(r.status, c.status) << r.message;
    EXPECT_EQ(r.failed_step, c.step) << r.message;
    for (const char* w : c.words) {
      EXPECT_NE(r.message.find(w), std::string::npos) << "no \"" << w << "\" in: " << r.message;
    }
    for (const auto& o : t.out) EXPECT_TRUE(o->Untouched());
    return;
  }
  ASSERT_EQ(r.status, 0) << r.message;
  // The same call under the default profile, changed as the row says, gives the same bits.
  Case d = c;
  if (c.as_default) c.as_default(&d);
  Tensors td;
  const OpResult rd = Run(d, &td);
  ASSERT_EQ(rd.status, 0) << rd.message;
  ASSERT_EQ(t.out.size(), td.out.size());
  std::vector<size_t> unwritten;
  aclnn_cpu::SocFamily family;
  ASSERT_TRUE(aclnn_cpu::ParseSocName(soc, &family));
  const aclnn_cpu::SocProfile profile{family, soc};
  if (c.op == Op::kCe && profile.ignores_zloss()) {
    unwritten = {2, 3};  // zlossOut and lseForZlossOut: never written by that NPU
  }
  for (size_t i = 0; i < t.out.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    if (std::find(unwritten.begin(), unwritten.end(), i) != unwritten.end()) {
      EXPECT_TRUE(t.out[i]->Untouched());
      continue;
    }
    EXPECT_EQ(t.out[i]->Untouched(), td.out[i]->Untouched());
    if (!t.out[i]->Untouched()) {
      EXPECT_EQ(t.out[i]->Get(), td.out[i]->Get());
    }
  }
}

void WithoutZloss(Case* c) { c->z = 0.0; }

Case Make(const char* name, Op op, void (*edit)(Case*)) {
  Case c;
  c.name = name;
  c.op = op;
  edit(&c);
  return c;
}

}  // namespace

TEST(SocProfiles, Selection) {
  EXPECT_STREQ(aclrtGetSocName(), "aclnn-cpu");
  for (const char* name : {"Ascend910B1", "Ascend910B2C", "Ascend910B4-1", "Ascend910_9391",
                           "Ascend950PR", "Ascend910A", "Ascend910ProA", "Ascend310P3"}) {
    ASSERT_TRUE(aclnn_cpu::SelectSoc(name).ok()) << name;
    EXPECT_STREQ(aclrtGetSocName(), name);
  }
  for (const char* bad : {"Ascend910B", "Ascend910B5", "Ascend910_931", "ascend910b1", "Ascend910",
                          "Ascend310", "GPU", "Ascend910B1 "}) {
    const aclnn_cpu::Status st = aclnn_cpu::SelectSoc(bad);
    EXPECT_EQ(st.code, ACL_ERROR_INVALID_PARAM) << bad;
    EXPECT_NE(st.msg.find("is not a known SoC; known: Ascend910B1..Ascend910B4"), std::string::npos)
        << st.msg;
    EXPECT_STREQ(aclrtGetSocName(), "Ascend310P3");  // unchanged
  }
  ASSERT_TRUE(aclnn_cpu::SelectSoc("").ok());
  EXPECT_STREQ(aclrtGetSocName(), "aclnn-cpu");
}

TEST(SocProfiles, ChosenAtAclInitFromTheEnvironment) {
  ASSERT_EQ(setenv("ACLNN_CPU_SOC", "Ascend910B3", 1), 0);
  EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_STREQ(aclrtGetSocName(), "Ascend910B3");
  ASSERT_EQ(setenv("ACLNN_CPU_SOC", "Ascend999", 1), 0);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_INVALID_PARAM);
  const std::string msg = TakeMessage();
  EXPECT_NE(msg.find("aclInit: ACLNN_CPU_SOC=\"Ascend999\" is not a known SoC"), std::string::npos)
      << msg;
  EXPECT_STREQ(aclrtGetSocName(), "Ascend910B3");
  ASSERT_EQ(unsetenv("ACLNN_CPU_SOC"), 0);
  EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_STREQ(aclrtGetSocName(), "aclnn-cpu");
}

// Atlas A2/A3.
TEST(SocProfiles, Ascend910BFamily) {
  const std::vector<Case> rules = {
      Make("grad_int32_target", Op::kCeGrad,
           [](Case* c) {
             c->target_dtype = ACL_INT32;
             c->status = 161002;
             c->words = {"target has dtype INT32", "Ascend910B2", "INT64 targets only"};
           }),
      Make("forward_int32_target", Op::kCe,
           [](Case* c) {
             c->target_dtype = ACL_INT32;
             c->status = 161002;
             c->words = {"aclnnCrossEntropyLoss: target has dtype INT32", "Ascend910B2"};
           }),
      Make("grad_label_smoothing", Op::kCeGrad,
           [](Case* c) {
             c->ls = 0.1;
             c->status = 161002;
             c->words = {"labelSmoothing 0.1 is not implemented on Ascend910B2", "hangs"};
           }),
      Make("grad_target_length", Op::kCeGrad,
           [](Case* c) {
             c->target_len = 3;
             c->status = 561002;
             c->words = {"target has shape [3]"};
           }),
      Make("forward_target_length", Op::kCe,
           [](Case* c) {
             c->target_len = 3;
             c->status = 561002;
             c->words = {"target has shape [3]"};
           }),
      Make("grad_unknown_reduction", Op::kCeGrad,
           [](Case* c) {
             c->reduction = "avg";
             c->status = 561002;
             c->words = {"\"avg\"", "Ascend910B2 would silently compute \"none\""};
           }),
      Make("forward_unknown_reduction", Op::kCe,
           [](Case* c) {
             c->reduction = "avg";
             c->status = 561002;
             c->words = {"reductionOptional \"avg\" is not one of"};
           }),
      Make("grad_out_of_range_target", Op::kCeGrad,
           [](Case* c) {
             c->targets = {0, 7, 2, 3};
             c->status = ACL_ERROR_INVALID_PARAM;
             c->step = 3;
             c->words = {"target[1] = 7", "Ascend910B2 would read weight out of bounds"};
           }),
      Make("extension_does_not_exist", Op::kCeExt,
           [](Case* c) {
             c->status = 561003;
             c->words = {"aclnnCpuCrossEntropyLoss is aclnn-cpu's extension", "Ascend910B2"};
           }),
      // Accepted, with the NPU's numbers.
      Make("grad_zloss_ignored", Op::kCeGrad,
           [](Case* c) {
             c->z = 0.5;
             c->as_default = WithoutZloss;
           }),
      Make("grad_zloss_without_lse_ignored", Op::kCeGrad,
           [](Case* c) {
             c->z = 0.5;
             c->z_tensors = false;
             c->as_default = WithoutZloss;
           }),
      Make("grad_ignore_compared_in_fp32", Op::kCeGrad,
           [](Case* c) {
             c->ignore_index = 16777216;  // 2^24: 2^24 + 1 rounds to it in fp32
             c->targets = {0, 16777217, 2, 3};
             c->as_default = [](Case* d) { d->targets = {0, 16777216, 2, 3}; };
           }),
      Make("grad_none", Op::kCeGrad, [](Case* c) { c->reduction = "none"; }),
      Make("grad_bf16", Op::kCeGrad, [](Case* c) { c->dtype = ACL_BF16; }),
      Make("forward_label_smoothing", Op::kCe, [](Case* c) { c->ls = 0.1; }),
      // (zlossOut and lseForZlossOut are never written: checked for every forward row.)
      Make("forward_zloss_ignored", Op::kCe,
           [](Case* c) {
             c->z = 0.5;
             c->reduction = "none";
             c->as_default = WithoutZloss;
           }),
      Make("forward_zloss_ignored_mean", Op::kCe,
           [](Case* c) {
             c->z = 0.5;
             c->as_default = WithoutZloss;
           }),
      Make("log_softmax_bf16", Op::kLsm, [](Case* c) { c->dtype = ACL_BF16; }),
      Make("log_softmax_backward_empty_before_checks", Op::kLsmBwd,
           [](Case* c) {
             c->n = 0;
             c->dtype = ACL_DOUBLE;
           }),
  };
  for (const Case& c : rules) CheckCase("Ascend910B2", c);
}

TEST(SocProfiles, Ascend950) {
  const std::vector<Case> rules = {
      Make("grad_negative_ignore_masks_nothing", Op::kCeGrad,
           [](Case* c) {
             c->targets = {0, -100, 2, 3};
             c->status = ACL_ERROR_INVALID_PARAM;
             c->step = 3;
             c->words = {"target[1] = -100 is not a class in [0, 5)",
                         "on Ascend950PR a negative ignoreIndex masks no row"};
           }),
      Make("forward_negative_ignore_masks_nothing", Op::kCe,
           [](Case* c) {
             c->targets = {0, -100, 2, 3};
             c->status = ACL_ERROR_INVALID_PARAM;
             c->step = 3;
             c->words = {"aclnnCrossEntropyLoss: target[1] = -100", "masks no row"};
           }),
      Make("grad_out_of_range_target", Op::kCeGrad,
           [](Case* c) {
             c->targets = {0, 1, 9, 3};
             c->status = ACL_ERROR_INVALID_PARAM;
             c->step = 3;
             c->words = {"target[2] = 9", "traps the device"};
           }),
      Make("grad_target_length", Op::kCeGrad,
           [](Case* c) {
             c->target_len = 3;
             c->status = 561002;
             c->words = {"target has shape [3]"};
           }),
      Make("grad_gradLoss_shape_before_target", Op::kCeGrad,
           [](Case* c) {
             c->reduction = "none";
             c->grad_loss_0d_for_none = true;
             c->target_len = 3;
             c->status = 561002;
             c->words = {"gradLoss has shape []"};
           }),
      Make("extension_does_not_exist", Op::kCeExt,
           [](Case* c) {
             c->status = 561003;
             c->words = {"does not exist on Ascend950PR"};
           }),
      Make("log_softmax_backward_checks_before_empty", Op::kLsmBwd,
           [](Case* c) {
             c->n = 0;
             c->dtype = ACL_DOUBLE;
             c->status = 161002;
             c->words = {"gradOutput has dtype DOUBLE"};
           }),
      // Accepted.
      Make("grad_int32_target", Op::kCeGrad, [](Case* c) { c->target_dtype = ACL_INT32; }),
      Make("forward_int32_target", Op::kCe, [](Case* c) { c->target_dtype = ACL_INT32; }),
      Make("grad_label_smoothing", Op::kCeGrad, [](Case* c) { c->ls = 0.1; }),
      Make("grad_nonnegative_ignore_masks", Op::kCeGrad,
           [](Case* c) {
             c->ignore_index = 1;
             c->targets = {0, 1, 2, 1};
           }),
      Make("grad_zloss_ignored", Op::kCeGrad,
           [](Case* c) {
             c->z = 0.5;
             c->as_default = WithoutZloss;
           }),
      Make("forward_zloss_ignored", Op::kCe,
           [](Case* c) {
             c->z = 0.5;
             c->as_default = WithoutZloss;
           }),
      Make("log_softmax_backward_empty", Op::kLsmBwd, [](Case* c) { c->n = 0; }),
  };
  for (const Case& c : rules) CheckCase("Ascend950PR", c);
}

TEST(SocProfiles, Ascend910And310P) {
  for (const char* soc : {"Ascend910ProA", "Ascend310P3"}) {
    const std::vector<Case> rules = {
        Make("log_softmax_bf16", Op::kLsm,
             [](Case* c) {
               c->dtype = ACL_BF16;
               c->status = 161002;
               c->words = {"aclnnLogSoftmax: self has dtype BF16", "SoC profile 910/310P"};
             }),
        Make("log_softmax_backward_bf16", Op::kLsmBwd,
             [](Case* c) {
               c->dtype = ACL_BF16;
               c->status = 161002;
               c->words = {"gradOutput has dtype BF16", "910/310P"};
             }),
        Make("grad_does_not_exist", Op::kCeGrad,
             [](Case* c) {
               c->status = 561003;
               c->words = {"aclnnCrossEntropyLossGrad does not exist on"};
             }),
        Make("forward_does_not_exist", Op::kCe,
             [](Case* c) {
               c->status = 561003;
               c->words = {"aclnnCrossEntropyLoss does not exist on"};
             }),
        Make("log_softmax_f16", Op::kLsm, [](Case* c) { c->dtype = ACL_FLOAT16; }),
        Make("log_softmax_backward_f32", Op::kLsmBwd, [](Case*) {}),
    };
    for (const Case& c : rules) CheckCase(soc, c);
  }
}

// The default profile, for the contrast with the rows above (its own suites are unchanged).
// DOUBLE inputs are aclnn-cpu's extension of the default profile (computed in double): every NPU
// profile refuses them with CANN's code and sentence, before the work, writing nothing.
TEST(SocProfiles, DoubleInputsOnlyUnderTheDefaultProfile) {
  for (const char* soc : {"Ascend910B2", "Ascend950PR", "Ascend910ProA", "Ascend310P3"}) {
    const std::vector<Case> rules = {
        Make("log_softmax_backward_double", Op::kLsmBwd,
             [](Case* c) {
               c->dtype = ACL_DOUBLE;
               c->status = 161002;
               c->words = {"gradOutput has dtype DOUBLE"};
             }),
        Make("grad_double", Op::kCeGrad,
             [](Case* c) {
               c->dtype = ACL_DOUBLE;
               c->status = 161002;
               c->words = {"logProb has dtype DOUBLE"};
             }),
        Make("forward_double", Op::kCe,
             [](Case* c) {
               c->dtype = ACL_DOUBLE;
               c->status = 161002;
               c->words = {"input has dtype DOUBLE"};
             }),
    };
    const bool exists = std::string(soc) != "Ascend910ProA" && std::string(soc) != "Ascend310P3";
    for (const Case& c : rules) {
      if (c.op != Op::kLsmBwd && !exists) continue;  // no cross-entropy there at all
      CheckCase(soc, c);
    }
  }
  for (Op op : {Op::kLsmBwd, Op::kCeGrad, Op::kCe}) {
    Case c = Make("double_accepted", op, [](Case* k) { k->dtype = ACL_DOUBLE; });
    CheckCase("", c);
  }
}

TEST(SocProfiles, DefaultFillsTheGaps) {
  const std::vector<Case> rules = {
      Make("grad_negative_ignore_masks", Op::kCeGrad,
           [](Case* c) {
             c->targets = {0, -100, 2, 3};
           }),
      Make("grad_int32_target", Op::kCeGrad, [](Case* c) { c->target_dtype = ACL_INT32; }),
      Make("grad_label_smoothing", Op::kCeGrad, [](Case* c) { c->ls = 0.1; }),
      Make("grad_zloss_used", Op::kCeGrad, [](Case* c) { c->z = 0.5; }),
      Make("grad_ignore_compared_exactly", Op::kCeGrad,
           [](Case* c) {
             c->ignore_index = 16777216;
             c->targets = {0, 16777217, 2, 3};
             c->status = ACL_ERROR_INVALID_PARAM;
             c->step = 3;
             c->words = {"target[1] = 16777217 is neither ignoreIndex (16777216)"};
           }),
      Make("grad_target_before_gradLoss_shape", Op::kCeGrad,
           [](Case* c) {
             c->reduction = "none";
             c->grad_loss_0d_for_none = true;
             c->target_len = 3;
             c->status = 561002;
             c->words = {"target has shape [3]"};
           }),
      Make("log_softmax_backward_empty_before_checks", Op::kLsmBwd,
           [](Case* c) {
             c->n = 0;
             c->dtype = ACL_DOUBLE;
           }),
      Make("extension", Op::kCeExt, [](Case*) {}),
  };
  for (const Case& c : rules) CheckCase("", c);
}
