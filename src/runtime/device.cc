// aclInit/aclFinalize and device 0 (this CPU).
#include <cstdlib>

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "core/log.h"
#include "core/soc.h"
#include "core/status.h"
#include "runtime/stream.h"
#include "simd/dispatch.h"

using aclnn_cpu::Fail;
using aclnn_cpu::MakeError;

namespace {
aclError CheckDevice(const char* fn, int32_t id) {
  if (id != 0) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM,
                          "%s: device %d does not exist (aclnn-cpu has one device, 0).", fn,
                          static_cast<int>(id)));
  }
  return ACL_SUCCESS;
}
}  // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclError aclInit(const char* /*configPath*/) {
  aclnn_cpu::ReloadLogSettings();
  aclnn_cpu::InitDispatch();
  // The SoC profile (docs/soc_profiles.md); an unknown name leaves the profile as it was.
  const aclnn_cpu::Status st = aclnn_cpu::SelectSoc(std::getenv(aclnn_cpu::kSocEnvVar));
  if (!st.ok()) return Fail(st);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY const char* aclrtGetSocName() { return aclnn_cpu::CurrentSoc().name; }

ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion,
                                             int32_t* patchVersion) {
  if (majorVersion == nullptr || minorVersion == nullptr || patchVersion == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: a version pointer is null."));
  }
  *majorVersion = ACLNN_CPU_VERSION_MAJOR;
  *minorVersion = ACLNN_CPU_VERSION_MINOR;
  *patchVersion = ACLNN_CPU_VERSION_PATCH;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY const char* aclnnCpuGetVersion(void) { return ACLNN_CPU_VERSION_STRING; }

ACL_FUNC_VISIBILITY aclError aclFinalize(void) {
  aclnn_cpu::SynchronizeAllStreams();
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char* configPath) { return aclInit(configPath); }
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId) {
  return CheckDevice("aclrtSetDevice", deviceId);
}

ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId) {
  return CheckDevice("aclrtResetDevice", deviceId);
}

ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t* deviceId) {
  if (deviceId == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is null."));
  }
  // Device 0 is always usable; report it even before aclrtSetDevice, as work runs there anyway.
  *deviceId = 0;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t* count) {
  if (count == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is null."));
  }
  *count = 1;
  return ACL_SUCCESS;
}

}  // extern "C"
