// 64-bit indexing: an output of more than 2^31 elements. gradOutput and output are broadcast
// rows (outer stride 0), so only `out` needs real memory (4.3 GB of bf16). Release builds only:
// sanitizer shadow memory would exceed the machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "core/dtype.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ACLNN_CPU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ACLNN_CPU_SANITIZED 1
#endif
#endif

using namespace testing_support;

TEST(LargeTensor, MoreThanTwoToTheThirtyOneElements) {
#ifdef ACLNN_CPU_SANITIZED
  GTEST_SKIP() << "needs 4.3 GB plus sanitizer shadow memory";
#else
  const int64_t rows = (int64_t{1} << 20) + 1, cols = 2048;  // 2^31 + 2048 elements
  const int64_t shape[] = {rows, cols}, bcast[] = {0, 1}, dense[] = {cols, 1}, row[] = {cols};
  std::vector<uint16_t> g(cols), y(cols);
  for (int64_t j = 0; j < cols; ++j) {
    g[j] = aclnn_cpu::FloatToBf16(static_cast<float>(j % 7) - 3.0f);
    y[j] = aclnn_cpu::FloatToBf16(-8.0f - static_cast<float>(j % 5));
  }
  void* out = nullptr;
  const size_t bytes = static_cast<size_t>(rows * cols) * 2;
  ASSERT_EQ(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  aclTensor* tg = aclCreateTensor(shape, 2, ACL_BF16, bcast, 0, ACL_FORMAT_ND, row, 1, g.data());
  aclTensor* ty = aclCreateTensor(shape, 2, ACL_BF16, bcast, 0, ACL_FORMAT_ND, row, 1, y.data());
  aclTensor* to = aclCreateTensor(shape, 2, ACL_BF16, dense, 0, ACL_FORMAT_ND, shape, 2, out);
  ASSERT_TRUE(tg && ty && to);
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, ws, ex);
      },
      aclnnLogSoftmaxBackward);
  ASSERT_EQ(r.status, 0) << r.message;
  // Every row is the same; compare the first row with the last ones (offsets past 2^31).
  const auto* o = static_cast<const uint16_t*>(out);
  for (int64_t i : {int64_t{0}, rows / 2, rows - 2, rows - 1}) {
    ASSERT_EQ(std::memcmp(o, o + i * cols, cols * 2), 0) << "row " << i;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < cols; ++j) sum += aclnn_cpu::Bf16ToFloat(g[j]);
  const double expect = aclnn_cpu::Bf16ToFloat(g[5]) - std::exp(aclnn_cpu::Bf16ToFloat(y[5])) * sum;
  EXPECT_NEAR(aclnn_cpu::Bf16ToFloat(o[(rows - 1) * cols + 5]), expect, 0.01 * std::fabs(expect));
  aclDestroyTensor(tg);
  aclDestroyTensor(ty);
  aclDestroyTensor(to);
  aclrtFree(out);
#endif
}
