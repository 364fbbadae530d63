// aclnnCrossEntropyLoss example: fp32 input [2, 5] = {5,0,3,3,7, 9,3,5,2,4}, target {0, 0}, no
// weight, "mean", ignoreIndex -100, no label smoothing, no z-loss.
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> inputShape = {2, 5};
  std::vector<int64_t> targetShape = {2};
  std::vector<int64_t> lossOutShape = {};
  std::vector<int64_t> logProbOutShape = {2, 5};
  std::vector<int64_t> zlossOutShape = {};
  std::vector<int64_t> lseForZlossOutShape = {2};
  void* inputDeviceAddr = nullptr;
  void* targetDeviceAddr = nullptr;
  void* lossOutDeviceAddr = nullptr;
  void* logProbOutDeviceAddr = nullptr;
  void* zlossOutDeviceAddr = nullptr;
  void* lseForZlossOutDeviceAddr = nullptr;
  aclTensor* input = nullptr;
  aclTensor* target = nullptr;
  aclTensor* lossOut = nullptr;
  aclTensor* logProbOut = nullptr;
  aclTensor* zlossOut = nullptr;
  aclTensor* lseForZlossOut = nullptr;
  std::vector<float> inputHostData = {5, 0, 3, 3, 7, 9, 3, 5, 2, 4};
  std::vector<int64_t> targetHostData = {0, 0};
  std::vector<float> lossOutHostData = {0};
  std::vector<float> logProbOutHostData(10, 0);
  std::vector<float> zlossOutHostData = {0};
  std::vector<float> lseForZlossOutHostData = {0, 0};
  char* reduction = "mean";  // CANN programs pass literals to char*
  int64_t ignoreIndex = -100;
  double labelSmoothing = 0.0;
  double lseSquareScaleForZloss = 0.0;
  bool returnZloss = false;

  ret =
      CreateAclTensor(inputHostData, inputShape, &inputDeviceAddr, aclDataType::ACL_FLOAT, &input);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(targetHostData, targetShape, &targetDeviceAddr, aclDataType::ACL_INT64,
                        &target);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(lossOutHostData, lossOutShape, &lossOutDeviceAddr, aclDataType::ACL_FLOAT,
                        &lossOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(logProbOutHostData, logProbOutShape, &logProbOutDeviceAddr,
                        aclDataType::ACL_FLOAT, &logProbOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(zlossOutHostData, zlossOutShape, &zlossOutDeviceAddr,
                        aclDataType::ACL_FLOAT, &zlossOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(lseForZlossOutHostData, lseForZlossOutShape, &lseForZlossOutDeviceAddr,
                        aclDataType::ACL_FLOAT, &lseForZlossOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnCrossEntropyLossGetWorkspaceSize(
      input, target, nullptr, reduction, ignoreIndex, labelSmoothing, lseSquareScaleForZloss,
      returnZloss, lossOut, logProbOut, zlossOut, lseForZlossOut, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnCrossEntropyLossGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnCrossEntropyLoss(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnCrossEntropyLoss failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  std::vector<float> lossData(1, 0);
  ret = aclrtMemcpy(lossData.data(), sizeof(float), lossOutDeviceAddr, sizeof(float),
                    ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  LOG_PRINT("loss result[0] is: %f\n", lossData[0]);
  auto size = GetShapeSize(logProbOutShape);
  std::vector<float> logProbData(size, 0);
  ret = aclrtMemcpy(logProbData.data(), size * sizeof(float), logProbOutDeviceAddr,
                    size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("logProb result[%ld] is: %f\n", i, logProbData[i]);
  }

  aclDestroyTensor(input);
  aclDestroyTensor(target);
  aclDestroyTensor(lossOut);
  aclDestroyTensor(logProbOut);
  aclDestroyTensor(zlossOut);
  aclDestroyTensor(lseForZlossOut);
  aclrtFree(inputDeviceAddr);
  aclrtFree(targetDeviceAddr);
  aclrtFree(lossOutDeviceAddr);
  aclrtFree(logProbOutDeviceAddr);
  aclrtFree(zlossOutDeviceAddr);
  aclrtFree(lseForZlossOutDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
