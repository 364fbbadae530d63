// Fuzzes phase 2 of every operator of the table on small problems whose data comes from the
// fuzzer's bytes (so NaN, inf, denormals and extreme values everywhere) with targets that are often
// out of range, strided outputs and canaries around every output view. Invariants: no crash, no
// sanitizer report, canaries outside the views intact, a failed call writes nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "device_tensor.h"
#include "op_table.h"

namespace {

constexpr unsigned char kCanary = 0x5A;

int64_t Size(aclDataType t) { return testing_support::DtypeBytes(t); }

// An aclrtMalloc block holding a (possibly strided) view: 16 canary bytes before and after and
// canaries in the gaps of a strided view.
struct Buf {
  void* block = nullptr;
  size_t bytes = 0;
  aclTensor* t = nullptr;
  std::vector<char> in_view;
  aclDataType dt = ACL_FLOAT;
  Buf(aclDataType dtype, std::vector<int64_t> shape, int64_t inner_step, FuzzedDataProvider* fill)
      : dt(dtype) {
    const size_t r = shape.size();
    std::vector<int64_t> strides(r, 1);
    int64_t s = inner_step;
    for (size_t i = r; i-- > 0;) {
      strides[i] = s;
      s *= shape[i];
    }
    const int64_t offset = 4;
    int64_t last = offset, n = 1;
    for (size_t i = 0; i < r; ++i) {
      last += (shape[i] - 1) * strides[i];
      n *= shape[i];
    }
    const int64_t elems = last + 1 + 4;
    bytes = static_cast<size_t>(elems * Size(dt));
    aclrtMalloc(&block, bytes, ACL_MEM_MALLOC_NORMAL_ONLY);
    std::memset(block, kCanary, bytes);
    in_view.assign(static_cast<size_t>(elems), 0);
    std::vector<int64_t> idx(r, 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = offset, rem = k;
      for (size_t i = r; i-- > 0;) {
        off += (rem % shape[i]) * strides[i];
        rem /= shape[i];
      }
      in_view[static_cast<size_t>(off)] = 1;
      if (fill != nullptr) {
        std::vector<uint8_t> v = fill->ConsumeBytes<uint8_t>(static_cast<size_t>(Size(dt)));
        v.resize(static_cast<size_t>(Size(dt)), 0);
        std::memcpy(static_cast<char*>(block) + off * Size(dt), v.data(), v.size());
      }
    }
    const int64_t storage[] = {elems};
    t = aclCreateTensor(shape.data(), r, dt, strides.data(), offset, ACL_FORMAT_ND, storage, 1,
                        block);
  }
  ~Buf() {
    aclDestroyTensor(t);
    aclrtFree(block);
  }
  bool CanariesOk(bool whole) const {
    const auto* p = static_cast<const unsigned char*>(block);
    for (size_t e = 0; e < in_view.size(); ++e) {
      if (!whole && in_view[e]) continue;
      for (int64_t b = 0; b < Size(dt); ++b) {
        if (p[e * static_cast<size_t>(Size(dt)) + static_cast<size_t>(b)] != kCanary) return false;
      }
    }
    return true;
  }
};

int Run(int st, uint64_t ws, aclOpExecutor* ex,
        aclnnStatus (*phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream)) {
  if (st != 0) return st;
  void* w = nullptr;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_NORMAL_ONLY);
  st = phase2(w, ws, ex, nullptr);
  if (st == 0) st = aclrtSynchronizeStream(nullptr);
  if (w) aclrtFree(w);
  aclGetRecentErrMsg();
  return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const std::vector<const optable::OpSpec*>& ops = optable::Ops();
  const optable::OpSpec& op = *ops[fdp.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  optable::Problem p = optable::DefaultProblem(&op);
  p.dtype = op.dtypes[fdp.ConsumeIntegralInRange<size_t>(0, op.dtypes.size() - 1)];
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t c = fdp.ConsumeIntegralInRange<int64_t>(1, 40);
  p.shape = {n, c};
  const int64_t step = fdp.ConsumeIntegralInRange<int64_t>(1, 2);  // 2: strided full tensors
  p.dim = fdp.ConsumeIntegralInRange<int64_t>(-2, 1);
  p.weight = fdp.ConsumeBool();
  static const char* const kReductions[] = {"mean", "sum", "none"};
  p.reduction = kReductions[fdp.ConsumeIntegralInRange<int>(0, 2)];
  p.ignore_index = fdp.ConsumeBool() ? -100 : fdp.ConsumeIntegralInRange<int64_t>(-1, c);
  p.label_smoothing = fdp.ConsumeProbability<double>();
  p.zloss = fdp.ConsumeBool() ? 0.0 : fdp.ConsumeFloatingPointInRange<double>(-1.0, 1.0);
  p.target_dtype = fdp.ConsumeBool() ? ACL_INT64 : ACL_INT32;
  // A third dimension where the operator takes one: a K-dimensional (N, C, d1) cross-entropy
  // problem for the lean pair, a 3-d tensor for the log-softmax operators.
  if (op.max_rank >= 3 && fdp.ConsumeBool()) {
    p.shape.push_back(fdp.ConsumeIntegralInRange<int64_t>(1, 9));
  }

  const std::vector<optable::TensorDecl> decls = op.declare(p);
  std::vector<std::unique_ptr<Buf>> bufs(decls.size());
  std::vector<aclTensor*> tensors(decls.size(), nullptr);
  for (size_t i = 0; i < decls.size(); ++i) {
    const optable::TensorDecl& d = decls[i];
    if (!d.present) continue;
    const bool input = op.params[i].role == optable::Role::kInput;
    const bool index = d.dtype == ACL_INT64 || d.dtype == ACL_INT32;
    const int64_t inner = d.shape == p.shape ? step : 1;
    bufs[i] = std::make_unique<Buf>(d.dtype, d.shape, inner, input && !index ? &fdp : nullptr);
    if (input && index) {
      // Class indices: in range most of the time, else any int64 (ignored, negative, past C).
      int64_t count = 1;
      for (int64_t e : d.shape) count *= e;
      for (int64_t k = 0; k < count; ++k) {
        int64_t t = fdp.ConsumeIntegralInRange<int64_t>(0, c - 1);
        if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) t = fdp.ConsumeIntegral<int64_t>();
        if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) t = p.ignore_index;
        char* at = static_cast<char*>(bufs[i]->block) + (4 + k) * Size(d.dtype);
        if (d.dtype == ACL_INT64) {
          std::memcpy(at, &t, 8);
        } else {
          const int32_t t32 = static_cast<int32_t>(t);
          std::memcpy(at, &t32, 4);
        }
      }
    }
    tensors[i] = bufs[i]->t;
  }
  std::string reduction = p.reduction;
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = Run(op.phase1(p.Args(tensors.data(), &reduction[0]), &ws, &ex), ws, ex, op.phase2);
  for (size_t i = 0; i < decls.size(); ++i) {
    if (bufs[i] && op.params[i].role == optable::Role::kOutput && !bufs[i]->CanariesOk(st != 0)) {
      std::abort();
    }
  }
  return 0;
}
