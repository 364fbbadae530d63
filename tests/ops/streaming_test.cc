// Outputs of kStreamingOutputBytes or more are written with non-temporal stores (16-bit outputs
// two f32 vectors at a time), by every operator of the table. Every row of such an output must
// have the bits of the same row computed alone (a small output, plain stores), whatever the row's
// alignment: the inputs of the large problem are the one-row problem's repeated (so every row is
// the same row) and C is odd, so output rows start at every alignment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "call.h"
#include "kernels/row_kernels.h"

using namespace testing_support;
using optable::Call;
using optable::Problem;

namespace {

constexpr int64_t kC = 4099;

// Rows whose output reaches the streaming threshold.
int64_t RowsFor(aclDataType dt) {
  const int64_t bytes = static_cast<int64_t>(aclnn_cpu::kStreamingOutputBytes);
  return bytes / (kC * DtypeBytes(dt)) + 3;
}

// The one-row problem's inputs, each repeated to the large problem's size.
void RepeatInputs(const Call& one, Call* big) {
  for (size_t i = 0; i < one.size(); ++i) {
    if (one.tensor(i) == nullptr || one.param(i).role != optable::Role::kInput) continue;
    const std::vector<double>& v = one.inputs()[i];
    const int64_t want = big->tensor(i)->numel();
    std::vector<double> r;
    r.reserve(static_cast<size_t>(want));
    while (static_cast<int64_t>(r.size()) < want) r.insert(r.end(), v.begin(), v.end());
    ASSERT_EQ(static_cast<int64_t>(r.size()), want) << one.param(i).name;
    big->Set(i, r);
  }
}

}  // namespace

TEST(StreamingStores, EveryOperatorRowsMatchPlainStores) {
  for (const optable::OpSpec* op : optable::Ops()) {
    for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
      // Every option on; "sum" so that each row depends on its own inputs only.
      Problem p = op->all_options(optable::DefaultProblem(op));
      p.dtype = dt;
      p.reduction = "sum";
      p.shape = {1, kC};
      SCOPED_TRACE(p.ToString());
      // Operators without a full-size output (the lean forward) stream nothing.
      bool full_output = false;
      const std::vector<optable::TensorDecl> decls = op->declare(p);
      for (size_t i = 0; i < decls.size(); ++i) {
        full_output |= decls[i].present && op->params[i].role == optable::Role::kOutput &&
                       decls[i].shape == p.shape;
      }
      if (!full_output) continue;
      Call one(p);
      one.FillRandom();
      const int index = op->IndexParam(p);
      if (index >= 0) one.Set(static_cast<size_t>(index), {17.0});  // a class, not ignored
      Problem pb = p;
      pb.shape = {RowsFor(dt), kC};
      Call big(pb);
      RepeatInputs(one, &big);
      bool streamed = false;
      ForEachTarget([&](const std::string& target) {
        SCOPED_TRACE(target);
        ASSERT_EQ(one.Run().status, 0) << aclGetRecentErrMsg();
        ASSERT_EQ(big.Run().status, 0) << aclGetRecentErrMsg();
        for (size_t i = 0; i < big.size(); ++i) {
          const DeviceTensor* b = big.tensor(i);
          if (b == nullptr || big.param(i).role != optable::Role::kOutput ||
              b->shape() != pb.shape) {
            continue;
          }
          ASSERT_GE(static_cast<uint64_t>(b->numel() * DtypeBytes(dt)),
                    aclnn_cpu::kStreamingOutputBytes);
          streamed = true;
          const size_t row = static_cast<size_t>(kC * DtypeBytes(dt));
          const auto* bytes = static_cast<const unsigned char*>(b->data());
          for (int64_t r = 0; r < pb.shape[0]; ++r) {
            ASSERT_EQ(std::memcmp(bytes + r * row, one.tensor(i)->data(), row), 0)
                << big.param(i).name << " row " << r << " of " << pb.shape[0];
          }
        }
      });
      EXPECT_TRUE(streamed) << "no full-size output";
    }
  }
}

// ACLNN_CPU_STREAMING_MIN_BYTES (read once) replaces the threshold; the CTest entry
// streaming_threshold_env runs this test with it set to 4096.
TEST(StreamingStores, ThresholdFromTheEnvironment) {
  const char* env = std::getenv("ACLNN_CPU_STREAMING_MIN_BYTES");
  if (env == nullptr) {
    EXPECT_EQ(aclnn_cpu::StreamingOutputBytes(), aclnn_cpu::kStreamingOutputBytes);
    return;
  }
  EXPECT_EQ(aclnn_cpu::StreamingOutputBytes(), std::strtoull(env, nullptr, 10));
}
