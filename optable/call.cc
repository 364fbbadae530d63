#include "call.h"

#include <utility>

namespace optable {

using testing_support::DeviceTensor;

Call::Call(const Problem& p) : p_(p), reduction_(p.reduction) {
  const std::vector<TensorDecl> decls = p_.op->declare(p_);
  tensors_.resize(decls.size());
  inputs_.resize(decls.size());
  for (size_t i = 0; i < decls.size(); ++i) {
    if (decls[i].present) {
      tensors_[i] = std::make_unique<DeviceTensor>(decls[i].dtype, decls[i].shape, p_.layout);
    }
  }
}

void Call::FillRandom(bool keep_values) {
  std::mt19937_64 rng(p_.seed);
  Values v(size());
  p_.op->fill(p_, rng, &v);
  for (size_t i = 0; i < size(); ++i) {
    if (tensor(i) == nullptr || param(i).role != Role::kInput) continue;
    if (keep_values) {
      Set(i, v[i]);
    } else {
      tensor(i)->Set(v[i]);  // rounds as Set does, without keeping a copy
    }
    std::vector<double>().swap(v[i]);
  }
}

void Call::Set(size_t i, const std::vector<double>& v) {
  inputs_[i] = tensor(i)->Rounded(v);
  tensor(i)->Set(inputs_[i]);
}

int Call::Phase1(uint64_t* workspace_size, aclOpExecutor** executor) {
  std::vector<aclTensor*> t(size(), nullptr);
  for (size_t i = 0; i < size(); ++i) t[i] = tensor(i) ? tensor(i)->get() : nullptr;
  return p_.op->phase1(p_.Args(t.data(), &reduction_[0]), workspace_size, executor);
}

aclnnStatus Call::Phase2(void* workspace, uint64_t size, aclOpExecutor* executor,
                         aclrtStream stream) const {
  return p_.op->phase2(workspace, size, executor, stream);
}

RunResult Call::Run(aclrtStream stream) {
  return testing_support::RunOp([this](uint64_t* ws, aclOpExecutor** ex) { return Phase1(ws, ex); },
                                p_.op->phase2, stream);
}

std::vector<Verdict> Call::Check() const {
  std::vector<Verdict> v;
  for (const Expected& e : p_.op->reference(p_, inputs_)) {
    const DeviceTensor* t = tensor(e.param);
    Verdict r;
    r.output = param(e.param).name;
    r.dtype = t->dtype();
    r.failure = tolerance::Compare(t->Get(), e.value, e.bound, e.compute, r.dtype, &r.stats);
    v.push_back(std::move(r));
  }
  return v;
}

bool Call::OutputsUntouched() const {
  for (size_t i = 0; i < size(); ++i) {
    if (tensor(i) && param(i).role == Role::kOutput && !tensor(i)->Untouched()) return false;
  }
  return true;
}

std::vector<double> Call::Outputs() const {
  std::vector<double> all;
  for (size_t i = 0; i < size(); ++i) {
    if (tensor(i) == nullptr || param(i).role != Role::kOutput) continue;
    const std::vector<double> v = tensor(i)->Get();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace optable
