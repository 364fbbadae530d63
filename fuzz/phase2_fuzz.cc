// Fuzzes phase 2 of every operator on small problems whose data comes from the fuzzer's bytes
// (so NaN, inf, denormals and extreme values everywhere) with targets that are often out of
// range, strided outputs and canaries around every output view. Invariants: no crash, no
// sanitizer report, canaries outside the views intact, a failed call writes nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"

namespace {

constexpr unsigned char kCanary = 0x5A;

int64_t Size(aclDataType t) { return t == ACL_FLOAT ? 4 : (t == ACL_INT64 ? 8 : 2); }

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
  static const aclDataType kTypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  const aclDataType dt = kTypes[fdp.ConsumeIntegralInRange<int>(0, 2)];
  const int op = fdp.ConsumeIntegralInRange<int>(0, 3);
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t c = fdp.ConsumeIntegralInRange<int64_t>(1, 40);
  const int64_t step = fdp.ConsumeIntegralInRange<int64_t>(1, 2);  // 2: a strided view
  const int64_t dim = fdp.ConsumeIntegralInRange<int64_t>(-2, 1);
  const bool weight = fdp.ConsumeBool();
  static const char* const kReductions[] = {"mean", "sum", "none"};
  char red[8];
  std::strncpy(red, kReductions[fdp.ConsumeIntegralInRange<int>(0, 2)], sizeof(red));
  const bool none = std::strcmp(red, "none") == 0;
  const int64_t ignore = fdp.ConsumeBool() ? -100 : fdp.ConsumeIntegralInRange<int64_t>(-1, c);
  const double ls = fdp.ConsumeProbability<double>();
  const double z = fdp.ConsumeBool() ? 0.0 : fdp.ConsumeFloatingPointInRange<double>(-1.0, 1.0);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  if (op <= 1) {
    Buf a(dt, {n, c}, step, &fdp), b(dt, {n, c}, step, &fdp), out(dt, {n, c}, step, nullptr);
    const int st =
        op == 0 ? Run(aclnnLogSoftmaxBackwardGetWorkspaceSize(a.t, b.t, dim, out.t, &ws, &ex), ws,
                      ex, aclnnLogSoftmaxBackward)
                : Run(aclnnLogSoftmaxGetWorkspaceSize(a.t, dim, out.t, &ws, &ex), ws, ex,
                      aclnnLogSoftmax);
    if (!out.CanariesOk(st != 0)) std::abort();
    return 0;
  }
  // Targets: in range most of the time, else any int64 (ignored, negative, past C).
  Buf target(ACL_INT64, {n}, 1, nullptr);
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = fdp.ConsumeIntegralInRange<int64_t>(0, c - 1);
    if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) t = fdp.ConsumeIntegral<int64_t>();
    if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) t = ignore;
    std::memcpy(static_cast<char*>(target.block) + (4 + i) * 8, &t, 8);
  }
  const std::vector<int64_t> scalar = none ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  Buf w(ACL_FLOAT, {c}, 1, &fdp);
  if (op == 2) {
    Buf g(dt, scalar, 1, &fdp), lp(dt, {n, c}, step, &fdp), gz(dt, scalar, 1, &fdp),
        lse(dt, {n}, 1, &fdp), out(dt, {n, c}, step, nullptr);
    const int st = Run(aclnnCrossEntropyLossGradGetWorkspaceSize(
                           g.t, lp.t, target.t, weight ? w.t : nullptr, z != 0 ? gz.t : nullptr,
                           z != 0 ? lse.t : nullptr, red, ignore, ls, z, out.t, &ws, &ex),
                       ws, ex, aclnnCrossEntropyLossGrad);
    if (!out.CanariesOk(st != 0)) std::abort();
  } else {
    Buf x(dt, {n, c}, step, &fdp), loss(dt, scalar, 1, nullptr), lp(dt, {n, c}, step, nullptr),
        zl(dt, scalar, 1, nullptr), lse(dt, {n}, 1, nullptr);
    const int st = Run(
        aclnnCrossEntropyLossGetWorkspaceSize(x.t, target.t, weight ? w.t : nullptr, red, ignore,
                                              ls, z, true, loss.t, lp.t, zl.t, lse.t, &ws, &ex),
        ws, ex, aclnnCrossEntropyLoss);
    for (const Buf* o : {&loss, &lp, &zl, &lse}) {
      if (!o->CanariesOk(st != 0)) std::abort();
    }
  }
  return 0;
}
