// Fuzzes phase 1 of every operator of the table with random tensor metadata: ranks 0..10, dims
// including 0 and huge values, strides, offsets, storages, every dtype (invalid ones too), formats,
// null tensors and random attributes. Invariants: no crash, no leak (ASan), every rejection carries
// a message naming the operator; successful executors are destroyed unrun.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "op_table.h"

namespace {

alignas(64) unsigned char g_storage[1 << 16];

struct Tensors {
  std::vector<aclTensor*> all;
  ~Tensors() {
    for (aclTensor* t : all) aclDestroyTensor(t);
  }
};

aclDataType PickDtype(FuzzedDataProvider& fdp) {
  static const aclDataType kTypes[] = {ACL_FLOAT, ACL_FLOAT16,   ACL_BF16,   ACL_DOUBLE,
                                       ACL_INT64, ACL_INT32,     ACL_INT8,   ACL_BOOL,
                                       ACL_UINT8, ACL_COMPLEX64, ACL_STRING, ACL_DT_UNDEFINED};
  return kTypes[fdp.ConsumeIntegralInRange<size_t>(0, sizeof(kTypes) / sizeof(kTypes[0]) - 1)];
}

// A tensor from fuzzed metadata, or null (requested, or rejected by aclCreateTensor).
aclTensor* MakeTensor(FuzzedDataProvider& fdp, Tensors& keep) {
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) return nullptr;
  const int rank = fdp.ConsumeIntegralInRange<int>(0, 10);
  std::vector<int64_t> dims(rank), strides(rank);
  for (int i = 0; i < rank; ++i) {
    dims[i] = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(0, 6)
                                : fdp.ConsumeIntegral<int64_t>();
    strides[i] = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(0, 64)
                                   : fdp.ConsumeIntegral<int64_t>();
  }
  const int64_t offset = fdp.ConsumeIntegralInRange<int64_t>(-2, 100);
  std::vector<int64_t> storage = {fdp.ConsumeIntegralInRange<int64_t>(0, 4096)};
  const aclFormat fmt = static_cast<aclFormat>(fdp.ConsumeIntegralInRange<int>(-1, 50));
  void* data = fdp.ConsumeBool() ? static_cast<void*>(g_storage) : nullptr;
  aclTensor* t = aclCreateTensor(dims.data(), static_cast<uint64_t>(rank), PickDtype(fdp),
                                 strides.data(), offset, fmt, storage.data(), 1, data);
  if (t != nullptr) keep.all.push_back(t);
  return t;
}

void CheckOutcome(int st, aclOpExecutor* ex, const char* op) {
  if (st == 0) {
    if (ex == nullptr || aclDestroyAclOpExecutor(ex) != 0) std::abort();
    return;
  }
  const char* m = aclGetRecentErrMsg();
  if (m == nullptr || std::strstr(m, op) == nullptr) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  Tensors keep;
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  static const char* const kReductions[] = {"mean", "sum", "none", "avg", "", nullptr};
  char reduction_buf[8];
  const char* r = kReductions[fdp.ConsumeIntegralInRange<int>(0, 5)];
  char* reduction = nullptr;
  if (r != nullptr) {
    std::strncpy(reduction_buf, r, sizeof(reduction_buf));
    reduction = reduction_buf;
  }
  optable::CallArgs args;
  args.dim = fdp.ConsumeIntegralInRange<int64_t>(-12, 12);
  args.reduction = reduction;
  args.ignore_index = fdp.ConsumeIntegral<int64_t>();
  args.label_smoothing = fdp.ConsumeFloatingPoint<double>();
  args.zloss = fdp.ConsumeBool() ? 0.0 : fdp.ConsumeFloatingPoint<double>();
  const std::vector<const optable::OpSpec*>& ops = optable::Ops();
  const optable::OpSpec& op = *ops[fdp.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  std::vector<aclTensor*> tensors(op.params.size());
  for (aclTensor*& t : tensors) t = MakeTensor(fdp, keep);
  args.tensors = tensors.data();
  args.return_zloss = fdp.ConsumeBool();
  CheckOutcome(op.phase1(args, &ws, &ex), ex, op.api);
  return 0;
}
