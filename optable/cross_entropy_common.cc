#include "cross_entropy_common.h"

#include <algorithm>

#include "device_tensor.h"

namespace optable {
namespace ce {

namespace {

std::vector<Attr> Attrs() {
  return {Attr::kReduction,      Attr::kWeight, Attr::kIgnoreIndex,
          Attr::kLabelSmoothing, Attr::kZloss,  Attr::kTargetDtype};
}
std::vector<aclDataType> Dtypes() { return {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}; }

}  // namespace

std::vector<int64_t> PositionShape(const Problem& p) {
  std::vector<int64_t> s = p.shape;
  s.erase(s.begin() + 1);
  return s;
}

std::vector<int64_t> TargetShape(const Problem& p) {
  return p.shape.size() == 2 ? std::vector<int64_t>{p.TargetLength()} : PositionShape(p);
}

std::vector<int64_t> LossShape(const Problem& p) {
  return p.reduction == "none" ? PositionShape(p) : std::vector<int64_t>{};
}

namespace {

// Calls f(element of (N, C, S), element of (N * S, C)) for every element.
template <typename F>
void ForEachRowElement(const Problem& p, F&& f) {
  const int64_t n = p.shape[0], c = p.shape[1],
                s = ref::Numel(p.shape) / std::max<int64_t>(n * c, 1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      for (int64_t k = 0; k < s; ++k) f((i * c + j) * s + k, (i * s + k) * c + j);
    }
  }
}

}  // namespace

std::vector<double> ToRows(const Problem& p, const std::vector<double>& x) {
  if (p.shape.size() == 2) return x;
  std::vector<double> r(x.size());
  ForEachRowElement(p, [&](int64_t e, int64_t row) { r[row] = x[e]; });
  return r;
}

std::vector<double> FromRows(const Problem& p, const std::vector<double>& rows) {
  if (p.shape.size() == 2) return rows;
  std::vector<double> x(rows.size());
  ForEachRowElement(p, [&](int64_t e, int64_t row) { x[e] = rows[row]; });
  return x;
}

std::vector<double> Targets(const Problem& p, std::mt19937_64& rng) {
  const int64_t n = ref::Numel(TargetShape(p)), c = p.shape[1];
  std::uniform_int_distribution<int64_t> cls(0, std::max<int64_t>(c - 1, 0)),
      pick(0, std::max<int64_t>(p.ignore_every - 1, 0));
  std::vector<double> t(static_cast<size_t>(n));
  for (double& v : t) {
    v = static_cast<double>((c == 0 || pick(rng) == 0) ? p.ignore_index : cls(rng));
  }
  return t;
}

std::vector<double> Weights(const Problem& p, std::mt19937_64& rng) {
  return testing_support::Uniform(rng, p.shape[1], 0.5, 2.0);
}

ref::CrossEntropyArgs RefArgs(const Problem& p, const std::vector<double>& target,
                              const std::vector<double>& weight) {
  ref::CrossEntropyArgs a;
  a.n = ref::Numel(PositionShape(p));  // the rows of ToRows
  a.c = p.shape[1];
  for (double v : target) a.target.push_back(static_cast<int64_t>(v));
  a.weight = weight;
  a.reduction = p.reduction == "none"  ? ref::Reduction::kNone
                : p.reduction == "sum" ? ref::Reduction::kSum
                                       : ref::Reduction::kMean;
  a.ignore_index = p.ignore_index;
  a.label_smoothing = p.label_smoothing;
  a.zloss_scale = p.zloss;
  return a;
}

namespace {

// Weight, label smoothing 0.1 and z-loss 1e-3.
Problem AllOptions(Problem p) {
  p.weight = true;
  p.label_smoothing = 0.1;
  p.zloss = 1e-3;
  return p;
}

// The speed issue's shapes and option sets.
std::vector<Problem> BenchProblems(const OpSpec* op) {
  std::vector<Problem> v;
  auto add = [&](std::vector<int64_t> shape, aclDataType t, bool weight, double ls, double z) {
    Problem p = DefaultProblem(op);
    p.shape = std::move(shape);
    p.dtype = t;
    p.weight = weight;
    p.label_smoothing = ls;
    p.zloss = z;
    p.ignore_every = 17;  // as PyTorch's side of the benchmark (torch_bench.cc)
    v.push_back(p);
  };
  add({4096, 32000}, ACL_FLOAT, false, 0.0, 0.0);
  add({4096, 32000}, ACL_FLOAT, false, 0.1, 0.0);
  add({4096, 32000}, ACL_FLOAT, true, 0.1, 0.0);
  add({4096, 32000}, ACL_FLOAT, true, 0.1, 1e-4);
  add({8192, 50257}, ACL_BF16, true, 0.1, 0.0);
  add({2048, 128256}, ACL_FLOAT, false, 0.0, 0.0);
  add({1, 262144}, ACL_FLOAT, false, 0.0, 0.0);
  add({8, 8}, ACL_FLOAT, false, 0.0, 0.0);
  return v;
}

}  // namespace

OpSpec MakeSpec(const char* name, const char* alias, const char* api, std::vector<Param> params,
                decltype(OpSpec::declare) declare, decltype(OpSpec::fill) fill,
                decltype(OpSpec::phase1) phase1, decltype(OpSpec::phase2) phase2,
                decltype(OpSpec::reference) reference) {
  return OpSpec{name,   alias,     api,        std::move(params), Attrs(), Dtypes(),
                2,      2,         "NxC",      declare,           fill,    phase1,
                phase2, reference, AllOptions, BenchProblems};
}

}  // namespace ce
}  // namespace optable
