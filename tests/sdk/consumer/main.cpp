// Links through find_package(aclnn_cpu); prints the version (the library's and the CMake
// package's, which must agree) and runs LogSoftmax on one row.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_logsoftmax.h"

int main() {
  int32_t major = -1, minor = -1, patch = -1;
  if (aclrtGetVersion(&major, &minor, &patch) != ACL_SUCCESS) return 1;
  std::printf("aclnn-cpu %d.%d.%d (aclnnCpuGetVersion %s, CMake package %s)\n", major, minor, patch,
              aclnnCpuGetVersion(), PACKAGE_VERSION);
  if (std::strcmp(aclnnCpuGetVersion(), PACKAGE_VERSION) != 0) return 1;
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  int64_t shape[] = {3}, strides[] = {1};
  aclTensor* tx = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, x);
  aclTensor* ty = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, y);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  int st = aclnnLogSoftmaxGetWorkspaceSize(tx, 0, ty, &ws, &ex);
  if (st == 0) st = aclnnLogSoftmax(nullptr, ws, ex, nullptr);
  if (st == 0) st = aclrtSynchronizeStream(nullptr);
  aclDestroyTensor(tx);
  aclDestroyTensor(ty);
  std::printf("log_softmax(1, 2, 3) = %f %f %f\n", y[0], y[1], y[2]);
  return (st == 0 && std::fabs(y[2] + 0.407606f) < 1e-5f) ? 0 : 1;
}
