// aclnnLogSoftmax in the operator table.
#include "aclnnop/aclnn_logsoftmax.h"
#include "op_table.h"
#include "reference.h"
#include "tolerance.h"

namespace optable {

namespace {

enum { kSelf, kOut };

std::vector<TensorDecl> Declare(const Problem& p) {
  return {{true, p.dtype, p.shape}, {true, p.OutDtype(), p.shape}};
}

void Fill(const Problem& p, std::mt19937_64& rng, Values* v) {
  (*v)[kSelf] = testing_support::Normal(rng, ref::Numel(p.shape), 0.0, 2.0);
}

int Phase1(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  return aclnnLogSoftmaxGetWorkspaceSize(a.tensors[kSelf], a.dim, a.tensors[kOut], ws, ex);
}

std::vector<Expected> Reference(const Problem& p, const Values& in) {
  // CANN casts self to out's dtype first, then computes in that dtype (f32 for halves).
  const aclDataType out = p.OutDtype();
  std::vector<double> x = in[kSelf];
  for (double& e : x) e = ref::RoundTo(out, e);
  std::vector<double> l;
  std::vector<double> expect = ref::LogSoftmax(x, p.shape, p.WrappedDim(), &l);
  std::vector<double> bound = tolerance::LogSoftmaxBound(expect, l, out);
  return {{kOut, std::move(expect), std::move(bound), out}};
}

Problem AllOptions(Problem p) { return p; }

std::vector<Problem> Bench(const OpSpec* self) {
  Problem p = DefaultProblem(self);
  p.shape = {4096, 32000};
  return {p};
}

}  // namespace

extern const OpSpec kLogSoftmax;  // external linkage (op_table.cc lists it)
// clang-format off
const OpSpec kLogSoftmax = {
    "log_softmax", "lsm", "aclnnLogSoftmax",
    {{"self", Role::kInput, false}, {"out", Role::kOutput, false}},
    {Attr::kOutDtype, Attr::kDim}, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE},
    /*ranks*/ 0, 8, "", Declare, Fill, Phase1, aclnnLogSoftmax, Reference, AllOptions, Bench};
// clang-format on

}  // namespace optable
