// aclnnCrossEntropyLoss in the operator table, and the extension aclnnCpuCrossEntropyLoss (the
// same operator with fp32 loss, z-loss and log-sum-exp outputs for every input dtype).
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "cross_entropy_common.h"
#include "device_tensor.h"
#include "tolerance.h"

namespace optable {

namespace {

enum { kInput, kTarget, kWeight, kLossOut, kLogProbOut, kZlossOut, kLseOut };

// `stats`: the dtype of lossOut, zlossOut and lseForZlossOut.
std::vector<TensorDecl> DeclareWith(const Problem& p, aclDataType stats) {
  const int64_t n = p.shape[0], c = p.shape[1];
  return {{true, p.dtype, p.shape},   {true, p.target_dtype, {p.TargetLength()}},
          {p.weight, ACL_FLOAT, {c}}, {true, stats, ce::LossShape(p)},
          {true, p.dtype, p.shape},   {true, stats, ce::LossShape(p)},
          {true, stats, {n}}};
}

std::vector<TensorDecl> Declare(const Problem& p) { return DeclareWith(p, p.dtype); }
std::vector<TensorDecl> DeclareFloatStats(const Problem& p) { return DeclareWith(p, ACL_FLOAT); }

void Fill(const Problem& p, std::mt19937_64& rng, Values* v) {
  (*v)[kInput] = testing_support::Normal(rng, ref::Numel(p.shape), 0.0, 2.0);
  (*v)[kTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kWeight] = ce::Weights(p, rng);
}

// The phase-1 call of `fn` (CANN's entry point or the extension's: the same parameters).
template <decltype(&aclnnCrossEntropyLossGetWorkspaceSize) fn>
int Phase1(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return fn(t[kInput], t[kTarget], t[kWeight], a.reduction, a.ignore_index, a.label_smoothing,
            a.zloss, a.return_zloss, t[kLossOut], t[kLogProbOut], t[kZlossOut], t[kLseOut], ws, ex);
}

std::vector<Expected> Reference(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kTarget], in[kWeight]);
  const ref::CrossEntropyResult e = ref::CrossEntropyLoss(a, in[kInput]);
  tolerance::CrossEntropyBounds b =
      tolerance::CrossEntropyLossBound(a, in[kInput], e, tolerance::UnitRoundoff(p.dtype));
  std::vector<Expected> v = {{kLogProbOut, e.log_prob, std::move(b.log_prob), p.dtype},
                             {kLossOut, e.loss, std::move(b.loss), p.dtype},
                             {kZlossOut, e.zloss, std::move(b.zloss), p.dtype}};
  // lseForZlossOut is written only when the z-loss is on.
  if (p.zloss != 0.0) v.push_back({kLseOut, e.lse, std::move(b.lse), p.dtype});
  return v;
}

// Its kernels are aclnnCrossEntropyLoss's: one 16-bit row, where the fp32 stores differ.
std::vector<Problem> FloatStatsBenchProblems(const OpSpec* op) {
  Problem p = op->all_options(DefaultProblem(op));
  p.shape = {8192, 50257};
  p.dtype = ACL_BF16;
  p.zloss = 0.0;
  p.ignore_every = 17;
  return {p};
}

const std::vector<Param> kParams = {
    {"input", Role::kInput, false},          {"target", Role::kInput, false},
    {"weightOptional", Role::kInput, true},  {"lossOut", Role::kOutput, false},
    {"logProbOut", Role::kOutput, false},    {"zlossOut", Role::kOutput, false},
    {"lseForZlossOut", Role::kOutput, false}};

OpSpec FloatStatsSpec() {
  OpSpec s = ce::MakeSpec("cross_entropy_loss_fp32", "ce_fp32", "aclnnCpuCrossEntropyLoss", kParams,
                          DeclareFloatStats, Fill, Phase1<aclnnCpuCrossEntropyLossGetWorkspaceSize>,
                          aclnnCpuCrossEntropyLoss, Reference);
  s.bench_problems = FloatStatsBenchProblems;
  // FLOAT statistics are for 16-bit inputs (a DOUBLE input's loss is DOUBLE, which the CANN
  // entry point already covers).
  s.dtypes = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  return s;
}

}  // namespace

extern const OpSpec kCrossEntropyLoss;  // external linkage (op_table.cc lists it)
const OpSpec kCrossEntropyLoss =
    ce::MakeSpec("cross_entropy_loss", "ce", "aclnnCrossEntropyLoss", kParams, Declare, Fill,
                 Phase1<aclnnCrossEntropyLossGetWorkspaceSize>, aclnnCrossEntropyLoss, Reference);

extern const OpSpec kCpuCrossEntropyLoss;  // external linkage (op_table.cc lists it)
const OpSpec kCpuCrossEntropyLoss = FloatStatsSpec();

}  // namespace optable
