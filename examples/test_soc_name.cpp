// Which SoC is this? CANN programs ask aclrtGetSocName() and pick their path from the answer;
// this one then asks aclnnCrossEntropyLossGrad for a label-smoothed gradient (labelSmoothing
// 0.1), which the Atlas A2/A3 (910B-family) gradient does not implement. Under aclnn-cpu's
// default profile the name is "aclnn-cpu" and the call succeeds; run with
// ACLNN_CPU_SOC=Ascend910B2 it reports that SoC and the NPU's refusal (docs/soc_profiles.md).
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
  const char* socName = aclrtGetSocName();
  CHECK_RET(socName != nullptr, LOG_PRINT("aclrtGetSocName failed\n"); return 1);
  LOG_PRINT("aclrtGetSocName: %s\n", socName);

  std::vector<int64_t> gradLossShape = {};
  std::vector<int64_t> logProbShape = {2, 3};
  std::vector<int64_t> targetShape = {2};
  void* gradLossDeviceAddr = nullptr;
  void* logProbDeviceAddr = nullptr;
  void* targetDeviceAddr = nullptr;
  void* outDeviceAddr = nullptr;
  aclTensor* gradLoss = nullptr;
  aclTensor* logProb = nullptr;
  aclTensor* target = nullptr;
  aclTensor* out = nullptr;
  std::vector<float> gradLossHostData = {1.0};
  std::vector<float> logProbHostData = {-1.2, -0.7, -1.5, -0.3, -2.1, -1.9};
  std::vector<int64_t> targetHostData = {1, 0};
  std::vector<float> outHostData(6, 0);
  char* reduction = "mean";
  double labelSmoothing = 0.1;

  ret = CreateAclTensor(gradLossHostData, gradLossShape, &gradLossDeviceAddr,
                        aclDataType::ACL_FLOAT, &gradLoss);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(logProbHostData, logProbShape, &logProbDeviceAddr, aclDataType::ACL_FLOAT,
                        &logProb);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(targetHostData, targetShape, &targetDeviceAddr, aclDataType::ACL_INT64,
                        &target);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHostData, logProbShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnCrossEntropyLossGradGetWorkspaceSize(gradLoss, logProb, target, nullptr, nullptr,
                                                  nullptr, reduction, -100, labelSmoothing, 0.0,
                                                  out, &workspaceSize, &executor);
  if (ret != ACL_SUCCESS) {
    LOG_PRINT("label smoothing %.1f in the gradient: not on this SoC (ERROR %d: %s)\n",
              labelSmoothing, ret, aclGetRecentErrMsg());
  } else {
    void* workspaceAddr = nullptr;
    if (workspaceSize > 0) {
      ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
      CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
                return ret);
    }
    ret = aclnnCrossEntropyLossGrad(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnCrossEntropyLossGrad failed. ERROR: %d\n", ret);
              return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
              return ret);
    std::vector<float> resultData(6, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(float), outDeviceAddr,
                      resultData.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result failed. ERROR: %d\n", ret); return ret);
    LOG_PRINT("label smoothing %.1f in the gradient: result[0] is: %f\n", labelSmoothing,
              resultData[0]);
    if (workspaceSize > 0) {
      aclrtFree(workspaceAddr);
    }
  }

  aclDestroyTensor(gradLoss);
  aclDestroyTensor(logProb);
  aclDestroyTensor(target);
  aclDestroyTensor(out);
  aclrtFree(gradLossDeviceAddr);
  aclrtFree(logProbDeviceAddr);
  aclrtFree(targetDeviceAddr);
  aclrtFree(outDeviceAddr);
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
