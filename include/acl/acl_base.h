/* CANN-compatible ACL base definitions (aclnn-cpu). Values match Huawei CANN. */
#ifndef ACL_ACL_BASE_H_
#define ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ACL_FUNC_VISIBILITY __declspec(dllexport)
#else
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_RT_FAILURE = 500003;

typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_STRING = 13,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27
} aclDataType;

typedef enum {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_HWCN = 16,
  ACL_FORMAT_NDHWC = 27,
  ACL_FORMAT_FRACTAL_NZ = 29,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NC = 35,
  ACL_FORMAT_NCL = 47
} aclFormat;

/* The explanation of the most recent error on the calling thread (for errors raised by queued
 * work: the thread that synchronized), or NULL when there is none. Reading it clears it; the
 * returned text stays valid until the next call on the same thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* ACL_ACL_BASE_H_ */
