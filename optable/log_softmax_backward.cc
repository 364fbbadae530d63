// aclnnLogSoftmaxBackward in the operator table.
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "op_table.h"
#include "reference.h"
#include "tolerance.h"

namespace optable {

namespace {

using testing_support::Normal;

enum { kGradOutput, kOutput, kOut };

std::vector<TensorDecl> Declare(const Problem& p) {
  return {{true, p.dtype, p.shape}, {true, p.dtype, p.shape}, {true, p.OutDtype(), p.shape}};
}

void Fill(const Problem& p, std::mt19937_64& rng, Values* v) {
  const int64_t numel = ref::Numel(p.shape);
  (*v)[kGradOutput] = Normal(rng, numel, 0.0, 1.0);
  (*v)[kOutput] = ref::LogSoftmax(Normal(rng, numel, 0.0, 2.0), p.shape, p.WrappedDim());
}

int Phase1(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  return aclnnLogSoftmaxBackwardGetWorkspaceSize(a.tensors[kGradOutput], a.tensors[kOutput], a.dim,
                                                 a.tensors[kOut], ws, ex);
}

std::vector<Expected> Reference(const Problem& p, const Values& in) {
  const std::vector<double>&g = in[kGradOutput], &y = in[kOutput];
  const int dim = p.WrappedDim();
  return {{kOut, ref::LogSoftmaxBackward(g, y, p.shape, dim),
           tolerance::LogSoftmaxBackwardBound(g, y, p.shape, dim, p.dtype), p.dtype}};
}

Problem AllOptions(Problem p) { return p; }

std::vector<Problem> Bench(const OpSpec* self) {
  std::vector<Problem> v;
  auto add = [&](std::vector<int64_t> shape, aclDataType t, int64_t dim) {
    Problem p = DefaultProblem(self);
    p.shape = std::move(shape);
    p.dtype = t;
    p.dim = dim;
    v.push_back(p);
  };
  for (aclDataType t : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) add({4096, 32000}, t, -1);
  for (aclDataType t : {ACL_FLOAT, ACL_BF16}) add({64, 512, 1024}, t, 1);
  add({8, 8}, ACL_FLOAT, -1);
  add({1}, ACL_FLOAT, -1);
  return v;
}

}  // namespace

extern const OpSpec kLogSoftmaxBackward;  // external linkage (op_table.cc lists it)
// clang-format off
const OpSpec kLogSoftmaxBackward = {
    "log_softmax_backward", "lsm_bwd", "aclnnLogSoftmaxBackward",
    {{"gradOutput", Role::kInput, false}, {"output", Role::kInput, false},
     {"out", Role::kOutput, false}},
    {Attr::kOutDtype, Attr::kDim}, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}, /*ranks*/ 0, 8, "",
    Declare, Fill, Phase1, aclnnLogSoftmaxBackward, Reference, AllOptions, Bench};
// clang-format on

}  // namespace optable
